import ArgumentParser
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db exec PATH SQL [--arg VALUE …]`: runs statements that change the file.
    struct Exec: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run SQL that changes the database and print the number of rows changed.",
            discussion: """
                The SQL may hold several statements separated by ';'; --arg values bind to the first one, and \
                the count is that of the last one. With --json, prints {"changes": N}.
                Example: gql-cli db exec app.sqlite "UPDATE User SET age = ? WHERE userId = ?" --arg 43 --arg 1001
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The SQL to run.")
        var sql: String

        @OptionGroup var sqlArguments: SQLArgumentOptions

        func run() throws {
            let db = try database.open(writable: true)
            let changes = try CLIError.guarding("the statement failed") {
                try db.execute(sql, sqlArguments.arguments)
            }
            if database.json {
                try database.printJSON(["changes": .int(Int64(changes))])
            } else {
                print(changes == 1 ? "1 row changed" : "\(changes) rows changed")
            }
        }
    }
}
