import Foundation
import GQLCore

/// A type that builds itself from a fetched row by hand, skipping `Decodable`: the fast path for fetches.
///
/// Fetching through `Decodable` costs a few indirect calls per field, because the synthesized `init(from:)`
/// can only reach the row through the standard library's type-erased containers. A ``GQLObject`` that also
/// adopts this protocol is fetched with ``init(row:)`` instead — by `fetchAll`, `fetchOne` and every other verb
/// that returns objects — which reads each column directly. Everything else (the table, inserts, updates)
/// still comes from the type's Codable conformance, so the two must agree on the column names.
///
/// ```swift
/// extension User: GQLRowDecodable {
///     init(row: GQLRow) throws {
///         userId = try row["userId"]
///         name = try row["name"]
///         age = try row["age"]
///         approved = try row["approved"]
///         nickname = try row["nickname"]     // String? reads NULL as nil
///     }
/// }
/// let adults = try User.fetchAll(db, "age >= ?", [18])   // now decoded with init(row:)
/// ```
///
/// `make bench-store` shows both paths side by side (Docs/Performance.md).
public protocol GQLRowDecodable {
    /// Makes a value from the current row of a fetch.
    ///
    /// - Throws: the ``GQLError`` `.decoding` a subscript of ``GQLRow`` throws for a missing column or a value
    ///   that does not fit, or any error of your own.
    init(row: GQLRow) throws
}

/// The current row of a fetch, read column by column in ``GQLRowDecodable/init(row:)``.
///
/// Columns are read by name with a subscript whose type comes from where the value goes, so an assignment
/// to a property reads the column as that property's type. The same conversions and the same errors as
/// Codable decoding apply: integers must fit, `Bool` columns hold 0 or 1, `Date` is ISO 8601 text, `Data` a
/// BLOB, other Codable types JSON text; an optional reads NULL (or a missing column) as `nil`. Reading the
/// columns in the table's order (the order of the type's properties) is fastest.
///
/// A row is only valid inside the `init(row:)` call it was handed to.
/// ```swift
/// init(row: GQLRow) throws {
///     id = try row["id"]                  // Int
///     tags = try row["tags"]              // [String], stored as JSON text
///     deletedAt = try row["deletedAt"]    // Date?
/// }
/// ```
public struct GQLRow {
    /// Keeps the decoder (and so its statement) alive for as long as the row exists, which keeps the reader's
    /// unretained reference valid even if a row escapes its `init(row:)` call: it then reads whatever row the
    /// statement is on, or NULLs, never freed memory.
    private let owner: RowDecoder
    private let decoder: ColumnReader

    init(_ decoder: RowDecoder) {
        owner = decoder
        self.decoder = decoder.reader
    }

    /// The name of the table the row comes from.
    public var tableName: String { owner.schema.name }

    /// The integer in `column`.
    public subscript(_ column: String) -> Int {
        get throws { try decoder.integer(decoder.column(column, Int.self), Int.self, column) }
    }

    /// The 64-bit integer in `column`.
    public subscript(_ column: String) -> Int64 {
        get throws { try decoder.integer(decoder.column(column, Int64.self), Int64.self, column) }
    }

    /// The number in `column`.
    public subscript(_ column: String) -> Double {
        get throws { try decoder.double(decoder.column(column, Double.self), column) }
    }

    /// The text in `column`.
    public subscript(_ column: String) -> String {
        get throws { try decoder.string(decoder.column(column, String.self), column) }
    }

    /// The bool (0 or 1) in `column`.
    public subscript(_ column: String) -> Bool {
        get throws { try decoder.bool(decoder.column(column, Bool.self), column) }
    }

    /// The date (ISO 8601 text, see `GQLDate`) in `column`.
    public subscript(_ column: String) -> Date {
        get throws { try decoder.value(decoder.column(column, Date.self), Date.self, column) }
    }

    /// The bytes (a BLOB) in `column`.
    public subscript(_ column: String) -> Data {
        get throws { try decoder.value(decoder.column(column, Data.self), Data.self, column) }
    }

    /// The value of any other Codable type in `column` (`UUID`, raw-value enums, arrays and nested types
    /// stored as JSON), optionals of them included.
    public subscript<T: Decodable>(_ column: String) -> T {
        get throws {
            if let optional = T.self as? any OptionalColumn.Type, decoder.present(column) == nil {
                // NULL or no such column: nil, as for the optionals above.
                if let absent = optional.absent as? T { return absent }
            }
            return try decoder.value(decoder.column(column, T.self), T.self, column)
        }
    }

    /// The integer in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Int? {
        get throws { try decoder.present(column).map { try decoder.integer($0, Int.self, column) } }
    }

    /// The 64-bit integer in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Int64? {
        get throws { try decoder.present(column).map { try decoder.integer($0, Int64.self, column) } }
    }

    /// The number in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Double? {
        get throws { try decoder.present(column).map { try decoder.double($0, column) } }
    }

    /// The text in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> String? {
        get throws { try decoder.present(column).map { try decoder.string($0, column) } }
    }

    /// The bool in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Bool? {
        get throws { try decoder.present(column).map { try decoder.bool($0, column) } }
    }

    /// The date in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Date? {
        get throws { try decoder.present(column).map { try decoder.value($0, Date.self, column) } }
    }

    /// The bytes in `column`, or `nil` for NULL.
    public subscript(_ column: String) -> Data? {
        get throws { try decoder.present(column).map { try decoder.value($0, Data.self, column) } }
    }
}

/// Lets the generic subscript of ``GQLRow`` answer `nil` for an optional of any type.
protocol OptionalColumn {
    static var absent: Self { get }
}

extension Optional: OptionalColumn {
    static var absent: Self { nil }
}
