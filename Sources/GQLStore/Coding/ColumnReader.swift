import CSQLite
import GQLCore

/// Reads one column of the current row of a ``RowDecoder`` as a given type, with the decoder's conversions and
/// errors. `name` is only evaluated for an error.
///
/// A trivial struct: the containers and ``GQLRow`` keep one and call it for every field, and it reads the
/// statement directly, so a field costs no reference counting. It asks its decoder only for the column index
/// (the decoder's cursor) and for error messages.
struct ColumnReader {
    let stmt: OpaquePointer
    /// Unmanaged, so that using it costs no retain and release per field: a reader lives inside one
    /// `init(from:)` or `init(row:)` call made by the decoder's own fetch loop (``GQLRow`` also holds the
    /// decoder strongly).
    private let unmanaged: Unmanaged<RowDecoder>

    init(stmt: OpaquePointer, decoder: RowDecoder) {
        self.stmt = stmt
        unmanaged = Unmanaged.passUnretained(decoder)
    }

    /// The decoder's column index for `name` (it moves the decoder's cursor).
    @inline(__always)
    private func index(_ name: String) -> Int32? {
        unmanaged._withUnsafeGuaranteedRef { $0.index(name) }
    }

    /// The decoder, for error paths and schema questions.
    var decoder: RowDecoder { unmanaged.takeUnretainedValue() }

    /// The column named `name`, or a thrown error when the table has none.
    @inline(__always)
    func column(_ name: String, _ type: Any.Type) throws -> Int32 {
        guard let i = index(name) else { throw decoder.missing(name, type) }
        return i
    }

    /// The column named `name` when it holds a value; `nil` for NULL or no such column.
    @inline(__always)
    func present(_ name: String) -> Int32? {
        guard let i = index(name), sqlite3_column_type(stmt, i) != SQLITE_NULL else { return nil }
        return i
    }

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ i: Int32, _ type: T.Type, _ name: @autoclosure () -> String) throws -> T {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER:
            if let v = T(exactly: sqlite3_column_int64(stmt, i)) { return v }
        case SQLITE_FLOAT:
            if let v = T(exactly: sqlite3_column_double(stmt, i)) { return v }
        default: break
        }
        throw decoder.mismatch(name(), T.self, found: decoder.statement.value(at: i))
    }

    @inline(__always)
    func bool(_ i: Int32, _ name: @autoclosure () -> String) throws -> Bool {
        guard sqlite3_column_type(stmt, i) == SQLITE_INTEGER else {
            throw decoder.mismatch(name(), Bool.self, found: decoder.statement.value(at: i))
        }
        return sqlite3_column_int64(stmt, i) != 0
    }

    @inline(__always)
    func string(_ i: Int32, _ name: @autoclosure () -> String) throws -> String {
        guard sqlite3_column_type(stmt, i) == SQLITE_TEXT else {
            throw decoder.mismatch(name(), String.self, found: decoder.statement.value(at: i))
        }
        guard let chars = sqlite3_column_text(stmt, i) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: chars, count: Int(sqlite3_column_bytes(stmt, i))), as: UTF8.self)
    }

    @inline(__always)
    func double(_ i: Int32, _ name: @autoclosure () -> String) throws -> Double {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_column_double(stmt, i)
        default: throw decoder.mismatch(name(), Double.self, found: decoder.statement.value(at: i))
        }
    }

    /// Any other Decodable column type (dates, data, JSON, raw-value enums…), through ``ColumnValue``.
    func value<T: Decodable>(_ i: Int32, _ type: T.Type, _ name: @autoclosure () -> String) throws -> T {
        let value = decoder.statement.value(at: i)
        do {
            return try ColumnValue.decode(T.self, from: value)
        } catch let mismatch as ColumnValue.Mismatch {
            throw decoder.mismatch(name(), T.self, found: mismatch.found, detail: mismatch.detail)
        }
    }
}
