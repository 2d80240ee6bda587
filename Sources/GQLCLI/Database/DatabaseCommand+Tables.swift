import ArgumentParser
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db tables PATH`: the table names, one a line.
    struct Tables: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the tables in a database file.",
            discussion: "Prints one table name a line, sorted; with --json, an array of names."
        )

        @OptionGroup var database: DatabaseOptions

        func run() throws {
            let db = try database.open()
            let names = try CLIError.guarding("cannot list the tables of \(database.path)") { try db.tableNames() }
            if database.json {
                try database.printJSON(.array(names.map { .string($0) }))
            } else {
                for name in names { print(name) }
            }
        }
    }
}
