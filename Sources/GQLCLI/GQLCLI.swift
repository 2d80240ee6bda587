import ArgumentParser

/// `gql-cli`: inspects GraphQLite databases and tours the store from a shell.
///
/// ```
/// gql-cli db tables app.sqlite
/// gql-cli db query app.sqlite "SELECT name, age FROM User WHERE age > ?" --arg 40
/// gql-cli demo
/// ```
@main
struct GQLCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gql-cli",
        abstract: "Drives every GraphQLite layer from a shell.",
        subcommands: [DatabaseCommand.self, DemoCommand.self]
    )
}
