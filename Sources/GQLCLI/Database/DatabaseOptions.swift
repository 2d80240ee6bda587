import ArgumentParser
import Foundation
import GQLStore

/// The options every `db` subcommand shares: the file and the output format.
struct DatabaseOptions: ParsableArguments {
    @Argument(help: "The database file. It must exist.")
    var path: String

    @Flag(help: "Print JSON instead of a text table.")
    var json = false

    @OptionGroup var key: DatabaseKeyOptions

    /// Opens the file at ``path`` after checking it exists, so inspecting never creates a database.
    ///
    /// - Throws: ``CLIError`` for a missing path, a directory, or a file SQLite cannot open.
    /// - Parameter writable: open for writing (`exec`); every other command opens the file read-only, so
    ///   inspecting never changes it, not even its journal mode.
    func open(writable: Bool = false) throws -> GQLDatabase {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CLIError("no database file at \(path)")
        }
        guard !isDirectory.boolValue else {
            throw CLIError("\(path) is a directory, not a database file")
        }
        var configuration = GQLDatabase.Configuration()
        configuration.maximumReaders = 1
        configuration.readOnly = !writable
        let db = try CLIError.guarding("cannot open \(path)") {
            try key.openDatabase(path, configuration: configuration)
        }
        // SQLite reads the header lazily: a file that is not a database fails on its first read.
        _ = try CLIError.guarding("cannot read \(path)") { try db.tableNames() }
        return db
    }

    /// Prints `value` as one line of compact JSON.
    func printJSON(_ value: GQLValue) throws {
        print(try CLIError.guarding("cannot write JSON") { try TerminalText.json(value) })
    }
}

/// Values bound to the `?` parameters of the SQL, from repeated `--arg VALUE` options.
struct SQLArgumentOptions: ParsableArguments {
    @Option(
        name: .customLong("arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "A value for the next ? parameter; repeat for more. Valid JSON (42, 1.5, true, null, \"text\") is "
                + "bound as that JSON value, anything else as a string.",
            valueName: "value"))
    var values: [String] = []

    /// The values as positional arguments.
    var arguments: GQLArguments {
        GQLArguments(values.map(Self.value(of:)))
    }

    /// `42` → int, `"42"` (quoted) → string, `John` → string, `null` → null.
    static func value(of text: String) -> GQLValue {
        (try? GQLValue(json: text)) ?? .string(text)
    }
}
