import GQLCore

/// The dictionary API: the same verbs as ``GQLObject``, on a table by name with ``GQLValues``.
///
/// It works for every registered type's table and for any table found in the file.
/// ```swift
/// try db.insert("User", ["userId": 1001, "name": "John Smith", "age": 42])
/// try db.update("User", ["userId": 1001, "age": 43])
/// let rows: [GQLValues] = try db.fetchAll("User", "age > ?", [40])
/// ```
extension GQLDatabaseContext {
    /// Inserts a row. Keys are column names.
    public func insert(_ table: String, _ values: [String: any GQLValueConvertible]) throws {
        let schema = try tableSchema(named: table)
        let (names, bound) = try columnValues(schema, values, operation: "insert")
        let sql =
            "INSERT INTO \(schema.quotedName) (\(names.map(\.quotedIdentifier).joined(separator: ", "))) VALUES (\(placeholders(names.count)))"
        try withWriteConnection { try $0.run(sql, bound, table: table) }
    }

    /// Updates the row whose primary key is in `values` with the other values.
    ///
    /// - Throws: ``GQLError`` `.missingPrimaryKey` without the key; `.notFound` when no row has it.
    public func update(_ table: String, _ values: [String: any GQLValueConvertible]) throws {
        let schema = try tableSchema(named: table)
        let key = try keyValue(schema, values, operation: "update")
        var rest = values
        rest[schema.primaryKey] = nil
        guard !rest.isEmpty else {
            guard try checkRows(schema, try keyCondition(schema), [key]) else {
                throw GQLError(
                    .notFound, "no \(table) has \(schema.primaryKey) = \(key)", table: table, operation: "update")
            }
            return
        }
        let changed = try updateRows(
            schema, rest, try keyCondition(schema), [key])
        guard changed > 0 else {
            throw GQLError(
                .notFound, "no \(table) has \(schema.primaryKey) = \(key)", table: table, operation: "update")
        }
    }

    /// Inserts the row, or updates the row with the same primary key — in one atomic statement.
    public func insertUpdate(_ table: String, _ values: [String: any GQLValueConvertible]) throws {
        try upsert(table, values)
    }

    /// Updates the row with the same primary key, or inserts it — in one atomic statement.
    public func updateInsert(_ table: String, _ values: [String: any GQLValueConvertible]) throws {
        try upsert(table, values)
    }

    /// Deletes the row whose primary key is in `values`.
    ///
    /// - Returns: whether a row was deleted.
    @discardableResult
    public func delete(_ table: String, _ values: [String: any GQLValueConvertible]) throws -> Bool {
        let schema = try tableSchema(named: table)
        let key = try keyValue(schema, values, operation: "delete")
        return try deleteRows(schema, try keyCondition(schema), [key]) > 0
    }

    /// The row with primary key `key`, or `nil`.
    public func fetchOne(_ table: String, key: some GQLValueConvertible) throws -> GQLValues? {
        let schema = try tableSchema(named: table)
        return try fetchRows(
            schema, try keyCondition(schema), [key], order: nil, limit: 1, offset: nil
        ).first
    }

    /// The first row that matches `condition` in `order`, or `nil`.
    public func fetchOne(
        _ table: String, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments(),
        order: String? = nil
    ) throws -> GQLValues? {
        try fetchAll(table, condition, arguments, order: order, limit: 1).first
    }

    /// Every row that matches `condition`, in `order`, after skipping `offset`, at most `limit`.
    public func fetchAll(
        _ table: String, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments(),
        order: String? = nil, limit: Int? = nil, offset: Int? = nil
    ) throws -> [GQLValues] {
        try fetchRows(try tableSchema(named: table), condition, arguments, order: order, limit: limit, offset: offset)
    }

    /// The number of rows that match `condition`.
    public func count(_ table: String, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()) throws
        -> Int
    {
        try countRows(try tableSchema(named: table), condition, arguments)
    }

    /// Whether a row with primary key `key` exists.
    public func check(_ table: String, key: some GQLValueConvertible) throws -> Bool {
        let schema = try tableSchema(named: table)
        return try checkRows(schema, try keyCondition(schema), [key])
    }

    /// Whether any row matches `condition`.
    public func check(_ table: String, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()) throws
        -> Bool
    {
        try checkRows(try tableSchema(named: table), condition, arguments)
    }

    /// Sets `values` on every row that matches `condition`; returns the number changed.
    @discardableResult
    public func updateAll(
        _ table: String, _ values: [String: any GQLValueConvertible], _ condition: String? = nil,
        _ arguments: GQLArguments = GQLArguments()
    ) throws -> Int {
        let schema = try tableSchema(named: table)
        return try updateRows(schema, values, condition, arguments)
    }

    /// Sets `values` on the row with primary key `key`; returns whether it existed.
    @discardableResult
    public func updateOne(_ table: String, _ values: [String: any GQLValueConvertible], key: some GQLValueConvertible)
        throws -> Bool
    {
        let schema = try tableSchema(named: table)
        return try updateRows(schema, values, try keyCondition(schema), [key])
            > 0
    }

    /// Deletes every row that matches `condition`; returns the number deleted.
    @discardableResult
    public func deleteAll(_ table: String, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments())
        throws -> Int
    {
        try deleteRows(try tableSchema(named: table), condition, arguments)
    }

    /// Deletes the row with primary key `key`; returns whether it existed.
    @discardableResult
    public func deleteOne(_ table: String, key: some GQLValueConvertible) throws -> Bool {
        let schema = try tableSchema(named: table)
        return try deleteRows(schema, try keyCondition(schema), [key]) > 0
    }

    /// The rows of any read-only SQL query, as dictionaries keyed by result column name.
    ///
    /// ```swift
    /// let rows = try db.fetchAll(sql: "SELECT name, COUNT(*) AS n FROM User GROUP BY name")
    /// ```
    public func fetchAll(sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> [GQLValues] {
        try withReadConnection { try $0.rows(sql, arguments) }
    }

    /// The rows of any read-only SQL query with their columns in order, as a table.
    ///
    /// ```swift
    /// let result = try db.fetchRows(sql: "SELECT name, age FROM User ORDER BY age")
    /// print(result.columns)        // ["name", "age"]
    /// ```
    public func fetchRows(sql: String, _ arguments: GQLArguments = GQLArguments()) throws -> GQLRows {
        try withReadConnection { try $0.rowSet(sql, arguments) }
    }

    // MARK: Helpers

    private func upsert(_ table: String, _ values: [String: any GQLValueConvertible]) throws {
        let schema = try tableSchema(named: table)
        _ = try keyValue(schema, values, operation: "insertUpdate")
        let (names, bound) = try columnValues(schema, values, operation: "insertUpdate")
        let others = names.filter { $0 != schema.primaryKey }.map(\.quotedIdentifier)
        let action =
            others.isEmpty ? "NOTHING" : "UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql =
            "INSERT INTO \(schema.quotedName) (\(names.map(\.quotedIdentifier).joined(separator: ", "))) VALUES (\(placeholders(names.count))) ON CONFLICT(\(try keyColumn(schema))) DO \(action)"
        try withWriteConnection { try $0.run(sql, bound, table: table) }
    }

    private func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// The quoted key column; tables without a single-column primary key have none.
    private func keyColumn(_ schema: TableSchema) throws -> String {
        guard schema.hasKey else {
            throw GQLError(
                .missingPrimaryKey,
                "the table \(schema.name) has no single-column primary key, so rows cannot be addressed by key",
                table: schema.name)
        }
        return schema.primaryKey.quotedIdentifier
    }

    private func keyCondition(_ schema: TableSchema) throws -> String { try keyColumn(schema) + " = ?" }

    private func keyValue(_ schema: TableSchema, _ values: [String: any GQLValueConvertible], operation: String) throws
        -> GQLValue
    {
        _ = try keyColumn(schema)
        guard let key = values[schema.primaryKey]?.gqlValue, !key.isNull else {
            throw GQLError(
                .missingPrimaryKey,
                "the values for \(operation) have no '\(schema.primaryKey)', the key of \(schema.name)",
                table: schema.name, column: schema.primaryKey, operation: operation)
        }
        return key
    }

    /// Column names (sorted) and their values, converted for storage; unknown columns are an error.
    private func columnValues(
        _ schema: TableSchema, _ values: [String: any GQLValueConvertible], operation: String
    ) throws -> ([String], [GQLValue]) {
        guard !values.isEmpty else {
            throw GQLError(.invalidArgument, "no values to \(operation)", table: schema.name, operation: operation)
        }
        let converted = try inputs(schema, values)
        let names = converted.keys.sorted()
        return (names, names.map { converted[$0]?.gqlValue ?? .null })
    }

    private func inputs(_ schema: TableSchema, _ values: [String: any GQLValueConvertible]) throws -> [String:
        any GQLValueConvertible]
    {
        var result: [String: any GQLValueConvertible] = [:]
        for (name, value) in values {
            guard let index = schema.columnIndex[name] else {
                throw GQLError(
                    .invalidArgument, "\(schema.name) has no column '\(name)'", table: schema.name, column: name)
            }
            result[name] = try schema.columns[index].input(value.gqlValue)
        }
        return result
    }
}

extension TableSchema.Column {
    /// A value from the dictionary API as the column stores it: JSON columns hold JSON text.
    func input(_ value: GQLValue) throws -> GQLValue {
        guard kind == .json else { return value }
        // A null in a nullable JSON column is SQL NULL; in a non-optional GQLValue property it is the JSON
        // text `null`, as the object API writes it.
        if value.isNull && nullable { return .null }
        return .string(try value.jsonString())
    }
}
