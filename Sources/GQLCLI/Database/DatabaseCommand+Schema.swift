import ArgumentParser
import GQLStore

extension DatabaseCommand {
    /// `gql-cli db schema PATH [TABLE]`: the CREATE statements, and one table's columns.
    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the CREATE statements of the file, or one table's statements and columns.",
            discussion: """
                Without TABLE, prints every CREATE statement (tables, indexes, views, triggers). With TABLE, \
                prints its statements and a table of its columns: type, nullability, primary key, default.
                With --json, an array of {type, name, table, sql}, or for TABLE an object with its sql, \
                columns and indexes.
                """
        )

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "A table or view to describe.")
        var table: String?

        func run() throws {
            let db = try database.open()
            if let table {
                try describe(table, db)
            } else {
                try listStatements(db)
            }
        }

        private func listStatements(_ db: GQLDatabase) throws {
            let rows = try CLIError.guarding("cannot read the schema of \(database.path)") {
                try db.fetchAll(
                    sql: """
                        SELECT type, name, tbl_name AS "table", sql FROM sqlite_master
                        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                        ORDER BY CASE type WHEN 'view' THEN 1 ELSE 0 END, tbl_name,
                                 CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name
                        """)
            }
            if database.json {
                try database.printJSON(.array(rows.map { .object($0) }))
            } else {
                for row in rows { print(Self.statement(row)) }
            }
        }

        private func describe(_ name: String, _ db: GQLDatabase) throws {
            let (objects, columns) = try CLIError.guarding("cannot read the schema of \(name)") {
                let objects = try db.fetchAll(
                    sql: """
                        SELECT type, name, sql FROM sqlite_master
                        WHERE tbl_name = ? COLLATE NOCASE AND sql IS NOT NULL
                        ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name
                        """, [name])
                let columns = try db.fetchAll(
                    sql: """
                        SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?, 'main') ORDER BY cid
                        """, [name])
                return (objects, columns)
            }
            let main = objects.first { ["table", "view"].contains($0["type"]?.stringValue) }
            guard let main, !columns.isEmpty else {
                throw CLIError("no table or view named '\(name)' in \(database.path)")
            }
            let keyCount = columns.filter { ($0["pk"]?.intValue ?? 0) > 0 }.count
            let described = columns.map { Column($0, keyCount: keyCount) }
            if database.json {
                try database.printJSON([
                    "name": main["name"] ?? .string(name),
                    "type": main["type"] ?? .null,
                    "sql": main["sql"] ?? .null,
                    "columns": .array(described.map(\.json)),
                    "indexes": .array(
                        objects.filter { $0["type"]?.stringValue == "index" }.map {
                            .object(["name": $0["name"] ?? .null, "sql": $0["sql"] ?? .null])
                        }),
                    "triggers": .array(
                        objects.filter { $0["type"]?.stringValue == "trigger" }.map {
                            .object(["name": $0["name"] ?? .null, "sql": $0["sql"] ?? .null])
                        }),
                ])
                return
            }
            for object in objects { print(Self.statement(object)) }
            print("")
            let table = TextTable(
                columns: ["column", "type", "nullable", "primary key", "default"],
                rows: described.map(\.cells), showsCount: false)
            print(table.rendered, terminator: "")
        }

        private static func statement(_ row: GQLValues) -> String {
            (row["sql"]?.stringValue ?? "") + ";"
        }

        /// One row of `pragma_table_info`, as the command shows it.
        private struct Column {
            var name: String
            var type: String
            var nullable: Bool
            /// 0 when not part of the key, else the column's position in it (1-based).
            var keyPosition: Int
            var keyCount: Int
            var defaultValue: GQLValue

            init(_ row: GQLValues, keyCount: Int) {
                name = row["name"]?.stringValue ?? ""
                type = row["type"]?.stringValue ?? ""
                keyPosition = Int(row["pk"]?.intValue ?? 0)
                self.keyCount = keyCount
                defaultValue = row["dflt_value"] ?? .null
                // An INTEGER PRIMARY KEY is the rowid and can never hold NULL, though SQLite reports notnull 0.
                let isRowid = keyPosition == 1 && keyCount == 1 && type.uppercased() == "INTEGER"
                nullable = (row["notnull"]?.intValue ?? 0) == 0 && !isRowid
            }

            var cells: [GQLValue] {
                let key: String =
                    switch keyPosition {
                    case 0: ""
                    case _ where keyCount == 1: "yes"
                    default: "yes (\(keyPosition) of \(keyCount))"
                    }
                return [
                    .string(name), .string(type), .string(nullable ? "yes" : "no"), .string(key),
                    defaultValue.isNull ? "" : defaultValue,
                ]
            }

            var json: GQLValue {
                [
                    "name": .string(name), "type": .string(type), "nullable": .bool(nullable),
                    "primaryKey": .bool(keyPosition > 0), "default": defaultValue,
                ]
            }
        }
    }
}
