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
        let setValues = try names.map { name -> GQLValue in
            guard let index = schema.columnIndex[name] else {
                throw GQLError(
                    .invalidArgument, "\(schema.name) has no column '\(name)'", table: schema.name, column: name,
                    operation: "update")
            }
            let value = try schema.columns[index].input(values[name]?.gqlValue ?? .null)
            if case .double(let d) = value, !d.isFinite {
                throw GQLError(.invalidValue, "cannot store the number \(d)", table: schema.name, column: name)
            }
            return value
        }
        var sql =
            "UPDATE \(schema.quotedName) SET "
            + names.enumerated().map { "\($1.quotedIdentifier) = \(WriteSession.updateValueFunction)(\($0))" }
            .joined(separator: ", ")
        sql.appendClauses(condition, order: nil, limit: nil, offset: nil)
        let writer = database.writer
        return try withWriteConnection { connection -> Int in
            let statement = try connection.cached(sql)
            defer { statement.reset() }
            try statement.bind(arguments)
            return try writer.withUpdateValues(setValues) {
                while try statement.step() {}
                return connection.changes
            }
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
        return try withReadConnection { try $0.scalar(sql, arguments).map { _ in true } ?? false }
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
                // A table's column names are unique: no lookup before each append.
                for (i, column) in columns.enumerated() {
                    row.appendUnique(column.name, column.output(statement.value(at: Int32(i))))
                }
                rows.append(row)
            }
            return rows
        }
    }
}
