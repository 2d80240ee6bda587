import GQLCore

/// The dictionary API's writes with a ``GQLValues`` (a fetched row, `try user.values()`), as they take a
/// `[String: any GQLValueConvertible]`: a row read from one table goes back in as it is.
///
/// ```swift
/// let row = try #require(try db.fetchOne("User", key: 1001))
/// try db.delete("User", row)
/// try db.insert("User", row)
/// ```
extension GQLDatabaseContext {
    /// Inserts a row (the same as with a dictionary).
    public func insert(_ table: String, _ values: GQLValues) throws {
        try insert(table, values.dictionary as [String: any GQLValueConvertible])
    }

    /// Updates the row whose primary key is in `values` with the other values.
    public func update(_ table: String, _ values: GQLValues) throws {
        try update(table, values.dictionary as [String: any GQLValueConvertible])
    }

    /// Inserts the row, or updates the row with the same primary key, in one atomic statement.
    public func insertUpdate(_ table: String, _ values: GQLValues) throws {
        try insertUpdate(table, values.dictionary as [String: any GQLValueConvertible])
    }

    /// Updates the row with the same primary key, or inserts it, in one atomic statement.
    public func updateInsert(_ table: String, _ values: GQLValues) throws {
        try updateInsert(table, values.dictionary as [String: any GQLValueConvertible])
    }

    /// Deletes the row whose primary key is in `values`; returns whether a row was deleted.
    @discardableResult
    public func delete(_ table: String, _ values: GQLValues) throws -> Bool {
        try delete(table, values.dictionary as [String: any GQLValueConvertible])
    }

    /// Sets `values` on every row that matches `condition`; returns the number changed.
    @discardableResult
    public func updateAll(
        _ table: String, _ values: GQLValues, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()
    ) throws -> Int {
        try updateAll(table, values.dictionary as [String: any GQLValueConvertible], condition, arguments)
    }

    /// Sets `values` on the row with primary key `key`; returns whether it existed.
    @discardableResult
    public func updateOne(_ table: String, _ values: GQLValues, key: some GQLValueConvertible) throws -> Bool {
        try updateOne(table, values.dictionary as [String: any GQLValueConvertible], key: key)
    }
}
