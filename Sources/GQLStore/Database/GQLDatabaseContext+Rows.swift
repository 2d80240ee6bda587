import GQLCore

/// The row operations the object API and the dictionary API share.
extension GQLDatabaseContext {
    func updateRows(
        _ schema: TableSchema, _ values: [String: any GQLValueConvertible], _ condition: String?,
        _ arguments: GQLArguments
    ) throws -> Int {
        guard !values.isEmpty else {
            throw GQLError(.invalidArgument, "no values to set", table: schema.name, operation: "update")
        }
        let names = values.keys.sorted()
        for name in names where schema.columnIndex[name] == nil && schema.primaryKeyIndex >= 0 {
            throw GQLError(
                .invalidArgument, "\(schema.name) has no column '\(name)'", table: schema.name, column: name,
                operation: "update")
        }
        var sql =
            "UPDATE \(schema.quotedName) SET " + names.map { "\($0.quotedIdentifier) = ?" }.joined(separator: ", ")
        sql.appendClauses(condition, order: nil, limit: nil, offset: nil)
        // SET values are bound as ?1…?n; the condition's own parameters follow, as numbered or named ones.
        let setValues = names.map { values[$0]?.gqlValue ?? .null }
        return try withWriteConnection { connection -> Int in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            for (i, value) in setValues.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            try statement.bindCondition(arguments, after: setValues.count)
            while try statement.step() {}
            return connection.changes
        }
    }

    func deleteRows(_ schema: TableSchema, _ condition: String?, _ arguments: GQLArguments) throws -> Int {
        var sql = "DELETE FROM \(schema.quotedName)"
        sql.appendClauses(condition, order: nil, limit: nil, offset: nil)
        return try withWriteConnection { connection -> Int in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            try statement.bind(arguments)
            while try statement.step() {}
            return connection.changes
        }
    }

    func countRows(_ schema: TableSchema, _ condition: String?, _ arguments: GQLArguments) throws -> Int {
        var sql = "SELECT COUNT(*) FROM \(schema.quotedName)"
        sql.appendClauses(condition, order: nil, limit: nil, offset: nil)
        return try withReadConnection { Int(try $0.scalar(sql, arguments)?.intValue ?? 0) }
    }

    func checkRows(_ schema: TableSchema, _ condition: String?, _ arguments: GQLArguments) throws -> Bool {
        var sql = "SELECT 1 FROM \(schema.quotedName)"
        sql.appendClauses(condition, order: nil, limit: 1, offset: nil)
        return try withReadConnection { try $0.scalar(sql, arguments) != nil }
    }

    func fetchRows(
        _ schema: TableSchema, _ condition: String?, _ arguments: GQLArguments, order: String?, limit: Int?,
        offset: Int?
    ) throws -> [GQLValues] {
        let sql = schema.selectSQL(condition, order: order, limit: limit, offset: offset)
        return try withReadConnection { connection in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            try statement.bind(arguments)
            var rows: [GQLValues] = []
            let columns = schema.columns
            while try statement.step() {
                var row = GQLValues(minimumCapacity: columns.count)
                for (i, column) in columns.enumerated() {
                    row[column.name] = column.output(statement.value(at: Int32(i)))
                }
                rows.append(row)
            }
            return rows
        }
    }
}

extension Statement {
    /// Binds a condition's arguments after `offset` already-bound parameters (the SET values of an UPDATE).
    func bindCondition(_ arguments: GQLArguments, after offset: Int) throws {
        if !arguments.named.isEmpty {
            guard arguments.positional.isEmpty else {
                throw GQLError(.invalidArgument, "pass either positional or named arguments, not both", sql: sql)
            }
            try bindNamed(arguments.named, skipping: offset)
            return
        }
        for (i, value) in arguments.positional.enumerated() { try bind(value, at: Int32(offset + i + 1)) }
        let expected = Int(parameterCount) - offset
        guard arguments.positional.count == expected else {
            throw GQLError(
                .invalidArgument,
                "the condition has \(expected) parameter(s) but \(arguments.positional.count) argument(s) were given",
                sql: sql)
        }
    }
}
