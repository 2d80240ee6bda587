import ArgumentParser

/// `gql-cli db …`: looks into an existing GraphQLite (or any SQLite) database file.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Inspect and query an existing database file.",
        discussion: """
            Every subcommand takes the path of an existing database file; a missing file is an error, \
            never a new database. Output is an aligned text table unless --json is given. An encrypted file \
            opens with --key-file F (a passphrase, or raw: and 64 hex digits) or the GQL_DB_KEY variable.
            """,
        subcommands: [
            Tables.self, Schema.self, Query.self, Exec.self, Count.self, Rekey.self, Encrypt.self, Decrypt.self,
            WriteLoop.self,
        ]
    )
}
