import CSQLite
import GQLCore

extension GQLObject {
    /// The object with primary key `key`, or `nil`.
    ///
    /// ```swift
    /// let user = try User.fetchOne(db, key: 1001)
    /// ```
    public static func fetchOne(_ db: some GQLDatabaseContext, key: some GQLValueConvertible) throws -> Self? {
        let schema = try db.schema(Self.self)
        let key = key.gqlValue
        return try db.withReadConnection { connection in
            let statement = try connection.statement(schema, .selectByKey)
            defer { statement.reset() }
            try statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            return try RowDecoder(statement: statement, schema: schema).decode(Self.self)
        }
    }

    /// The first object that matches `condition` in `order`, or `nil`.
    ///
    /// ```swift
    /// let oldest = try User.fetchOne(db, "approved = ?", [true], order: "age DESC")
    /// ```
    public static func fetchOne(
        _ db: some GQLDatabaseContext, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments(),
        order: String? = nil
    ) throws -> Self? {
        try fetchAll(db, condition, arguments, order: order, limit: 1).first
    }

    /// Every object that matches `condition`, in `order`, after skipping `offset`, at most `limit`.
    ///
    /// ```swift
    /// let page = try User.fetchAll(db, "age >= :min AND age <= :max", [":min": 18, ":max": 99],
    ///                              order: "age DESC", limit: 5, offset: 10)
    /// ```
    /// - Throws: ``GQLError`` `.sqlite` with the SQL for a bad condition; `.decoding` naming the column and
    ///   type for a value that does not fit its property.
    public static func fetchAll(
        _ db: some GQLDatabaseContext, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments(),
        order: String? = nil, limit: Int? = nil, offset: Int? = nil
    ) throws -> [Self] {
        let schema = try db.schema(Self.self)
        let sql = schema.selectSQL(condition, order: order, limit: limit, offset: offset)
        return try db.withReadConnection { connection in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            try statement.bind(arguments)
            return try RowDecoder(statement: statement, schema: schema).decodeAll(Self.self)
        }
    }

    /// The number of rows that match `condition` (all rows when it is `nil`).
    ///
    /// ```swift
    /// let n = try User.count(db, "age > 40")
    /// ```
    public static func count(
        _ db: some GQLDatabaseContext, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()
    ) throws -> Int {
        try db.countRows(try db.schema(Self.self), condition, arguments)
    }

    /// Whether a row with primary key `key` exists.
    ///
    /// ```swift
    /// let exists = try User.check(db, key: 1001)
    /// ```
    public static func check(_ db: some GQLDatabaseContext, key: some GQLValueConvertible) throws -> Bool {
        let schema = try db.schema(Self.self)
        let key = key.gqlValue
        return try db.withReadConnection { connection in
            let statement = try connection.statement(schema, .checkByKey)
            defer { statement.reset() }
            try statement.bind(key, at: 1)
            return try statement.step() && sqlite3_column_int64(statement.stmt, 0) == 1
        }
    }

    /// Whether any row matches `condition`.
    public static func check(
        _ db: some GQLDatabaseContext, _ condition: String? = nil, _ arguments: GQLArguments = GQLArguments()
    ) throws -> Bool {
        try db.checkRows(try db.schema(Self.self), condition, arguments)
    }
}
