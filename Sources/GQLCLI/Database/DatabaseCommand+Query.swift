import ArgumentParser
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db query PATH SQL [--arg VALUE …]`: the rows of one read-only statement.
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run one read-only SQL statement and print its rows.",
            discussion: """
                The statement runs on a read-only connection; use 'db exec' to change the file. \
                With --json, prints an array of objects keyed by column name.
                Example: gql-cli db query app.sqlite "SELECT name, age FROM User WHERE age > ?" --arg 40
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The SQL statement to run.")
        var sql: String

        @OptionGroup var sqlArguments: SQLArgumentOptions

        func run() throws {
            let db = try database.open()
            let result = try CLIError.guarding("the query failed") {
                try db.fetchRows(sql: sql, sqlArguments.arguments)
            }
            if database.json {
                // Columns in the query's order; a name given twice keeps its first value.
                let objects = result.rows.map { row in
                    var object = GQLValues(minimumCapacity: row.count)
                    for (column, value) in zip(result.columns, row) where object[column] == nil {
                        object[column] = value
                    }
                    return GQLValue.object(object)
                }
                try database.printJSON(.array(objects))
                return
            }
            print(TextTable(columns: result.columns, rows: result.rows).rendered, terminator: "")
        }
    }
}
