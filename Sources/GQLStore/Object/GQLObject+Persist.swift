import GQLCore

extension GQLObject {
    /// Inserts the object as a new row.
    ///
    /// ```swift
    /// try user.insert(db)
    /// ```
    /// - Throws: ``GQLError`` `.sqlite` (a constraint error) when a row with the same key exists.
    public func insert(_ db: some GQLDatabaseContext) throws {
        let schema = try db.schema(Self.self)
        _ = try db.withWriteConnection { try $0.write(self, schema, .insert) }
    }

    /// Writes every column of the object to the row with its key.
    ///
    /// - Throws: ``GQLError`` `.notFound` when no row has the object's key; nothing is written then.
    public func update(_ db: some GQLDatabaseContext) throws {
        let schema = try db.schema(Self.self)
        let changes = try db.withWriteConnection { try $0.write(self, schema, .update) }
        guard changes > 0 else {
            let key = (try? keyValue(schema)).map { "\($0)" } ?? "?"
            throw GQLError(
                .notFound, "no \(schema.name) has \(schema.primaryKey) = \(key)", table: schema.name,
                operation: "update")
        }
    }

    /// Inserts the object, or updates the row with its key when there is one — in one atomic statement.
    public func insertUpdate(_ db: some GQLDatabaseContext) throws {
        try upsert(db)
    }

    /// Updates the row with the object's key, or inserts the object when there is none — in one atomic
    /// statement. The outcome is the same as ``insertUpdate(_:)``; both names are kept for parity.
    public func updateInsert(_ db: some GQLDatabaseContext) throws {
        try upsert(db)
    }

    private func upsert(_ db: some GQLDatabaseContext) throws {
        let schema = try db.schema(Self.self)
        _ = try db.withWriteConnection { try $0.write(self, schema, .upsert) }
    }

    /// Deletes the row with the object's key.
    ///
    /// - Returns: whether a row was deleted.
    @discardableResult
    public func delete(_ db: some GQLDatabaseContext) throws -> Bool {
        let schema = try db.schema(Self.self)
        let key = try keyValue(schema)
        return try db.withWriteConnection { connection -> Int in
            try connection.run(schema.deleteSQL, [key], table: schema.name)
            return connection.changes
        } > 0
    }

    /// Sets `values` on every row that matches `condition`.
    ///
    /// ```swift
    /// try User.updateAll(db, ["approved": true], "age >= ? AND age <= ?", [30, 35])
    /// ```
    /// - Returns: the number of rows changed.
    @discardableResult
    public static func updateAll(
        _ db: some GQLDatabaseContext, _ values: [String: any GQLValueConvertible], _ condition: String? = nil,
        _ arguments: GQLArguments = GQLArguments()
    ) throws -> Int {
        let schema = try db.schema(Self.self)
        return try db.updateRows(schema, values, condition, arguments)
    }

    /// Sets `values` on the row with primary key `key`.
    ///
    /// ```swift
    /// try User.updateOne(db, ["approved": true], key: 1001)
    /// ```
    /// - Returns: whether a row was changed.
    @discardableResult
    public static func updateOne(
        _ db: some GQLDatabaseContext, _ values: [String: any GQLValueConvertible], key: some GQLValueConvertible
    ) throws -> Bool {
        let schema = try db.schema(Self.self)
        return try db.updateRows(schema, values, "\(schema.primaryKey.quotedIdentifier) = ?", [key]) > 0
    }

    /// Deletes every row that matches `condition` (every row when it is `nil`).
    ///
    /// ```swift
    /// try User.deleteAll(db, "age >= ? AND age <= ?", [30, 35])
    /// ```
    /// - Returns: the number of rows deleted.
    @discardableResult
    public static func deleteAll(
        _ db: some GQLDatabaseContext, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()
    ) throws -> Int {
        let schema = try db.schema(Self.self)
        return try db.deleteRows(schema, condition, arguments)
    }

    /// Deletes the row with primary key `key`.
    ///
    /// - Returns: whether a row was deleted.
    @discardableResult
    public static func deleteOne(_ db: some GQLDatabaseContext, key: some GQLValueConvertible) throws -> Bool {
        let schema = try db.schema(Self.self)
        return try db.deleteRows(schema, "\(schema.primaryKey.quotedIdentifier) = ?", [key]) > 0
    }
}
