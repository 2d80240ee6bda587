import GQLCore

extension GQLTransaction {
    /// The dictionary API's ``GQLDatabaseContext/insertUpdate(_:_:)`` for many rows of one shape: the same
    /// statement and the same conversions (JSON columns take JSON text), with the SQL built and checked once
    /// instead of once per row. Made by ``rowUpsert(_:columns:)``, run by ``upsert(_:_:)``.
    package struct RowUpsert: Sendable {
        let table: String
        let sql: String
        /// The columns, in the order their values are bound.
        let columns: [TableSchema.Column]
        /// The position of the table's key in ``columns``.
        let keyIndex: Int
    }

    /// Prepares the upsert of `columns` (which must name the table's key) into `table`.
    ///
    /// GQLSync writes each page of server items with it.
    /// ```swift
    /// let upsert = try tx.rowUpsert("Note", columns: ["noteId", "text"])
    /// try tx.upsert(upsert, ["n1", "hello"])
    /// ```
    /// - Throws: ``GQLError`` `.unknownTable`; `.missingPrimaryKey` when the table has no single-column key or
    ///   `columns` leaves it out; `.invalidArgument` for a column the table does not have.
    package func rowUpsert(_ table: String, columns names: [String]) throws -> RowUpsert {
        let schema = try tableSchema(named: table)
        guard schema.hasKey, let keyIndex = names.firstIndex(of: schema.primaryKey) else {
            throw GQLError(
                .missingPrimaryKey, "an upsert into \(table) needs its single-column key '\(schema.primaryKey)'",
                table: table, column: schema.primaryKey, operation: "insertUpdate")
        }
        let columns = try names.map { name -> TableSchema.Column in
            guard let index = schema.columnIndex[name] else {
                throw GQLError(.invalidArgument, "\(table) has no column '\(name)'", table: table, column: name)
            }
            return schema.columns[index]
        }
        let quoted = names.map(\.quotedIdentifier)
        let others = quoted.enumerated().filter { $0.offset != keyIndex }.map(\.element)
        let action =
            others.isEmpty ? "NOTHING" : "UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let sql =
            "INSERT INTO \(schema.quotedName) (\(quoted.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: names.count).joined(separator: ", ")
            + ") ON CONFLICT(\(schema.primaryKey.quotedIdentifier)) DO \(action)"
        return RowUpsert(table: table, sql: sql, columns: columns, keyIndex: keyIndex)
    }

    /// Inserts one row of `upsert`'s shape, or updates the row with its key; `values` in the columns' order.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` when the count of values is not the count of columns;
    ///   `.missingPrimaryKey` for a null key; SQLite's errors naming the table.
    package func upsert(_ upsert: RowUpsert, _ values: [GQLValue]) throws {
        guard values.count == upsert.columns.count else {
            throw GQLError(
                .invalidArgument,
                "an upsert into \(upsert.table) got \(values.count) values for \(upsert.columns.count) columns",
                table: upsert.table, operation: "insertUpdate")
        }
        guard !values[upsert.keyIndex].isNull else {
            throw GQLError(
                .missingPrimaryKey,
                "the values for insertUpdate have a null key, '\(upsert.columns[upsert.keyIndex].name)'",
                table: upsert.table, column: upsert.columns[upsert.keyIndex].name, operation: "insertUpdate")
        }
        let connection = try checkedConnection(write: true)
        if upsert.columns.contains(where: { $0.kind == .json }) {
            var converted = values
            for (index, column) in upsert.columns.enumerated() { converted[index] = try column.input(values[index]) }
            try connection.run(upsert.sql, converted, table: upsert.table)
        } else {
            try connection.run(upsert.sql, values, table: upsert.table)
        }
    }
}
