import GQLCore

/// A plain Codable type stored as one row of its own table.
///
/// The table is named after the type and its columns come from the type's Codable shape: Bool, the
/// integer and floating-point types, String, Date (ISO 8601 text), Data (BLOB), optionals (nullable
/// columns), and arrays, dictionaries and nested Codable types (JSON text).
///
/// ```swift
/// struct User: GQLObject {
///     var userId = 0
///     var name = ""
///     var age = 0
///     var approved = false
///     var nickname: String? = nil
///     static func primaryKey() -> String { "userId" }
/// }
/// var user = User(); user.userId = 1001; user.name = "John Smith"; user.age = 42
/// try user.insert(db)
/// ```
public protocol GQLObject: Codable, Sendable {
    /// A default instance; its values are the defaults of columns added to existing tables.
    init()
    /// The name of the property that identifies a row.
    static func primaryKey() -> String
    /// The table's name. Default: the type's name.
    static func tableName() -> String
}

extension GQLObject {
    public static func tableName() -> String { String(describing: Self.self) }

    /// The object's values, as the dictionary API takes and returns them.
    ///
    /// ```swift
    /// let values = try user.values()          // ["userId": 1001, "name": "John Smith", ...]
    /// try db.insert("User", values)
    /// ```
    public func values() throws -> GQLValues {
        let schema = try SchemaEncoder.schema(of: Self.self)
        let row = try RowEncoder.values(of: self, schema: schema)
        var values = GQLValues(minimumCapacity: row.count)
        for (column, value) in zip(schema.columns, row) { values[column.name] = column.output(value) }
        return values
    }

    /// The value of the primary key.
    func keyValue(_ schema: TableSchema) throws -> GQLValue {
        try RowEncoder.values(of: self, schema: schema)[schema.primaryKeyIndex]
    }
}

extension TableSchema.Column {
    /// A stored value as the dictionary API returns it: bools as bools, JSON columns parsed.
    @inline(__always)
    func output(_ value: GQLValue) -> GQLValue {
        switch (kind, value) {
        case (.bool, .int(let i)): return .bool(i != 0)
        case (.json, .string(let text)): return (try? GQLValue(json: text)) ?? value
        default: return value
        }
    }
}
