import GQLStore

/// The order of a query's result columns, which `fetchAll(sql:)` does not keep (its rows are dictionaries).
enum QueryColumns {
    private struct Rollback: Error {
        var names: [String]
    }

    private static let tableName = "gql_cli_result_columns"

    /// The result column names of `sql` in order, learned by creating an empty TEMP TABLE from it
    /// (`CREATE TEMP TABLE … AS SELECT * FROM (sql) LIMIT 0`, which, unlike a view, takes the arguments)
    /// inside a write transaction that is always rolled back, so the file is never changed.
    ///
    /// `nil` when SQLite cannot use the statement as a subquery (a PRAGMA, for one) or the write lock is not
    /// to be had. Call only with SQL that `fetchAll(sql:)` accepted: one read-only statement, so the text
    /// run here is one statement too.
    static func names(of sql: String, _ arguments: GQLArguments, in db: GQLDatabase) -> [String]? {
        var body = Substring(sql)
        while let last = body.last, last == ";" || last.isWhitespace { body = body.dropLast() }
        do {
            try db.write { tx in
                try tx.execute("CREATE TEMP TABLE \"\(tableName)\" AS SELECT * FROM (\(body)\n) LIMIT 0", arguments)
                let rows = try tx.fetchAll(
                    sql: "SELECT name FROM pragma_table_info('\(tableName)', 'temp') ORDER BY cid")
                throw Rollback(names: rows.compactMap { $0["name"]?.stringValue })
            }
        } catch let rollback as Rollback {
            return rollback.names
        } catch {
            return nil
        }
        return nil
    }

    /// The columns to show: the known order, restricted to names the rows have (SQLite renames a duplicate `id`
    /// to `id:1`, a dictionary keeps one), then any other names the rows have, sorted.
    static func order(known: [String]?, rows: [GQLValues]) -> [String] {
        var present = Set<String>()
        for row in rows { present.formUnion(row.keys) }
        guard let known else { return present.sorted() }
        if rows.isEmpty { return known }
        let ordered = known.filter { present.contains($0) }
        let seen = Set(ordered)
        return ordered + present.filter { !seen.contains($0) }.sorted()
    }
}
