import GQLCore

/// The result of a raw query as a table: column names in order, and each row's values in that order.
///
/// Unlike ``GQLDatabaseContext/fetchAll(sql:_:)``'s dictionaries, it keeps the column order and columns that
/// share a name.
/// ```swift
/// let result = try db.fetchRows(sql: "SELECT userId, name FROM User")
/// for row in result.rows { print(row[0], row[1]) }
/// ```
public struct GQLRows: Sendable, Hashable {
    /// The result columns' names, in order.
    public var columns: [String]
    /// The rows, each with one value per column.
    public var rows: [[GQLValue]]

    public init(columns: [String], rows: [[GQLValue]]) {
        self.columns = columns
        self.rows = rows
    }
}
