import ArgumentParser
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db count PATH TABLE [--where COND] [--arg VALUE …]`: the number of matching rows.
    struct Count: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count the rows of a table, optionally those matching a condition.",
            discussion: """
                Prints the number alone; with --json, {"count": N, "table": TABLE}.
                Example: gql-cli db count app.sqlite User --where "age > ?" --arg 40
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The table to count.")
        var table: String

        @Option(name: .customLong("where"), help: "An SQL condition over the table's columns.")
        var condition: String?

        @OptionGroup var sqlArguments: SQLArgumentOptions

        func run() throws {
            let db = try database.open()
            let count = try CLIError.guarding("cannot count \(table)") {
                try db.count(table, condition, sqlArguments.arguments)
            }
            if database.json {
                try database.printJSON(["count": .int(Int64(count)), "table": .string(table)])
            } else {
                print(count)
            }
        }
    }
}
