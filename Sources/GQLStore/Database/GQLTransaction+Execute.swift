import GQLCore

extension GQLTransaction {
    /// Runs raw SQL inside the transaction and returns the number of rows it changed.
    ///
    /// ```swift
    /// try db.write { tx in try tx.execute("CREATE INDEX user_age ON User(age)") }
    /// ```
    @discardableResult
    public func execute(_ sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> Int {
        let connection = try checkedConnection(write: true)
        defer {
            schemaCache.removeAll()
            database.schemaMayHaveChanged()
        }
        return try connection.execute(sql, arguments)
    }
}
