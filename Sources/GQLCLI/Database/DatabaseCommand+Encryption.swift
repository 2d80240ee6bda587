import ArgumentParser
import Foundation
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db rekey PATH --key-file OLD --new-key-file NEW`: re-encrypts every page with a new key, atomically.
    struct Rekey: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-encrypt an encrypted database with a new key.",
            discussion: """
                Every page is rewritten under the new key; killed part way, the file opens with the old key only, \
                afterwards with the new key only. The current key comes from --key-file or GQL_DB_KEY. No other \
                process may have the file open. Prints nothing on success.
                Example: gql-cli db rekey app.sqlite --key-file old.key --new-key-file new.key
                """
        )

        @Argument(help: "The encrypted database file.")
        var path: String

        @OptionGroup var key: DatabaseKeyOptions

        @Option(
            name: .customLong("new-key-file"),
            help: ArgumentHelp("A file holding the new key (same form as --key-file).", valueName: "file"))
        var newKeyFile: String

        func run() throws {
            guard FileManager.default.fileExists(atPath: path) else { throw CLIError("no database file at \(path)") }
            guard try key.key() != nil else { throw CLIError("rekey needs the current key: --key-file or GQL_DB_KEY") }
            let next = try DatabaseKeyOptions.key(file: newKeyFile)
            let db = try CLIError.guarding("cannot open \(path)") { try key.openDatabase(path) }
            try CLIError.guarding("rekey failed") { try db.rekey(next) }
        }
    }

    /// `gql-cli db encrypt SOURCE DESTINATION --key-file F`: an encrypted copy of a plain database.
    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an encrypted copy of a plain database.",
            discussion: """
                The key comes from --key-file or GQL_DB_KEY; DESTINATION must not exist. The source is only read.
                Example: gql-cli db encrypt plain.sqlite secret.sqlite --key-file app.key
                """
        )

        @OptionGroup var copy: DatabaseCopyOptions

        func run() throws { try copy.run("encrypt", GQLDatabase.encrypt(path:to:key:)) }
    }

    /// `gql-cli db decrypt SOURCE DESTINATION --key-file F`: a plain copy of an encrypted database.
    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a plain copy of an encrypted database.",
            discussion: """
                The key comes from --key-file or GQL_DB_KEY; DESTINATION must not exist. The source is only read.
                Example: gql-cli db decrypt secret.sqlite plain.sqlite --key-file app.key
                """
        )

        @OptionGroup var copy: DatabaseCopyOptions

        func run() throws { try copy.run("decrypt", GQLDatabase.decrypt(path:to:key:)) }
    }
}

/// What `db encrypt` and `db decrypt` take: the source, the copy to create and the key.
struct DatabaseCopyOptions: ParsableArguments {
    @Argument(help: "The database file to copy.") var source: String
    @Argument(help: "The copy to create; it must not exist.") var destination: String
    @OptionGroup var key: DatabaseKeyOptions

    func run(_ verb: String, _ body: (String, String, GQLDatabase.Key) throws -> Void) throws {
        guard let key = try key.key() else { throw CLIError("\(verb) needs a key: --key-file or GQL_DB_KEY") }
        try CLIError.guarding("cannot \(verb) \(source)") { try body(source, destination, key) }
    }
}
