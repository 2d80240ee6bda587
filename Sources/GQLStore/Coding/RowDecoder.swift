import CSQLite
import Foundation
import GQLCore

/// Decodes an object straight from the current row of a statement that selects the schema's columns in
/// schema order. One decoder serves every row of a fetch; nothing is copied into dictionaries.
final class RowDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let statement: Statement
    let schema: TableSchema
    /// Copied out of the statement and schema so the per-field work touches no other object.
    fileprivate let stmt: OpaquePointer
    fileprivate let names: [String]
    fileprivate var cursor = 0

    init(statement: Statement, schema: TableSchema) {
        self.statement = statement
        self.schema = schema
        self.stmt = statement.stmt
        self.names = schema.columnNames
    }

    /// Decodes the current row.
    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        cursor = 0
        return try T(from: self)
    }

    /// Decodes every remaining row.
    ///
    /// Rows go into a buffer of raw memory that grows by doubling and become an array once at the end:
    /// appending to an `Array` of a generic element in unspecialized code looks up the array's metadata on
    /// every append, which costs more than decoding a small row.
    func decodeAll<T: Decodable>(_ type: T.Type) throws -> [T] {
        var capacity = 64
        var count = 0
        var buffer = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        defer {
            buffer.deinitialize(count: count)
            buffer.deallocate()
        }
        while try statement.step() {
            if count == capacity {
                let larger = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
                larger.moveInitialize(from: buffer, count: count)
                buffer.deallocate()
                buffer = larger
                capacity *= 2
            }
            (buffer + count).initialize(to: try decode(T.self))
            count += 1
        }
        let rows = count
        count = 0  // moved out below; nothing left for the deferred deinitialize
        return [T](unsafeUninitializedCapacity: rows) { target, initialized in
            target.baseAddress?.moveInitialize(from: buffer, count: rows)
            initialized = rows
        }
    }

    /// The column of `key`, or `nil` when the table has none.
    @inline(__always)
    fileprivate func index(_ key: some CodingKey) -> Int32? {
        let name = key.stringValue
        let c = cursor
        if c < names.count, names[c] == name {
            cursor = c + 1
            return Int32(c)
        }
        if c > 0, names[c - 1] == name { return Int32(c - 1) }
        guard let index = schema.columnIndex[name] else { return nil }
        cursor = index + 1
        return Int32(index)
    }

    fileprivate func mismatch(_ key: some CodingKey, _ type: Any.Type, found: GQLValue, detail: String? = nil)
        -> GQLError
    {
        var message: String
        if found.isNull {
            message = "column '\(key.stringValue)' of \(schema.name) is NULL, but \(type) is not optional"
        } else {
            message =
                "column '\(key.stringValue)' of \(schema.name): expected \(type), found \(found.storedDescription)"
        }
        if let detail { message += " (\(detail))" }
        return GQLError(.decoding, message, table: schema.name, column: key.stringValue)
    }

    fileprivate func missing(_ key: some CodingKey, _ type: Any.Type) -> GQLError {
        GQLError(
            .decoding, "\(schema.name) has no column '\(key.stringValue)' for a \(type) value",
            table: schema.name, column: key.stringValue)
    }

    /// Holds the container made for the first row, so later rows reuse it: making one costs several generic
    /// metadata lookups and an allocation, more than decoding a row's fields.
    private final class Reused<Key: CodingKey> {
        let container: KeyedDecodingContainer<Key>
        init(_ container: KeyedDecodingContainer<Key>) { self.container = container }
    }
    private var reusedKey: ObjectIdentifier?
    private var reused: AnyObject?

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if reusedKey == ObjectIdentifier(Key.self), let reused {
            // The key type matched, so the holder is a Reused<Key>.
            return unsafeDowncast(reused, to: Reused<Key>.self).container
        }
        let container = KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
        reused = Reused(container)
        reusedKey = ObjectIdentifier(Key.self)
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }
}

private struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// Unowned(unsafe) keeps the container trivially copyable (the standard library's box copies it on every
    /// call). The decoder outlives every container it makes: containers live inside one `init(from:)` call
    /// made by the decoder's own fetch loop.
    unowned(unsafe) let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.schema.columns.compactMap { Key(stringValue: $0.name) } }

    private let stmt: OpaquePointer

    init(decoder: RowDecoder) {
        self.decoder = decoder
        self.stmt = decoder.stmt
    }

    func contains(_ key: Key) -> Bool { decoder.schema.columnIndex[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let i = decoder.index(key) else { return true }
        return sqlite3_column_type(stmt, i) == SQLITE_NULL
    }

    // Each kind is read at a known column index, so the plain and the optional forms share the work and
    // an optional costs one NULL check instead of the standard library's contains/decodeNil/decode.

    @inline(__always)
    private func column(_ key: Key, _ type: Any.Type) throws -> Int32 {
        guard let i = decoder.index(key) else { throw decoder.missing(key, type) }
        return i
    }

    /// The column of `key` when it holds a value; `nil` for NULL or no such column.
    @inline(__always)
    private func present(_ key: Key) -> Int32? {
        guard let i = decoder.index(key), sqlite3_column_type(stmt, i) != SQLITE_NULL else { return nil }
        return i
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ i: Int32, _ key: Key, _ type: T.Type) throws -> T {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER:
            if let v = T(exactly: sqlite3_column_int64(stmt, i)) { return v }
        case SQLITE_FLOAT:
            if let v = T(exactly: sqlite3_column_double(stmt, i)) { return v }
        default: break
        }
        throw decoder.mismatch(key, T.self, found: decoder.statement.value(at: i))
    }

    @inline(__always)
    private func bool(_ i: Int32, _ key: Key) throws -> Bool {
        guard sqlite3_column_type(stmt, i) == SQLITE_INTEGER else {
            throw decoder.mismatch(key, Bool.self, found: decoder.statement.value(at: i))
        }
        return sqlite3_column_int64(stmt, i) != 0
    }

    @inline(__always)
    private func string(_ i: Int32, _ key: Key) throws -> String {
        guard sqlite3_column_type(stmt, i) == SQLITE_TEXT else {
            throw decoder.mismatch(key, String.self, found: decoder.statement.value(at: i))
        }
        guard let chars = sqlite3_column_text(stmt, i) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: chars, count: Int(sqlite3_column_bytes(stmt, i))), as: UTF8.self)
    }

    @inline(__always)
    private func double(_ i: Int32, _ key: Key) throws -> Double {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_column_double(stmt, i)
        default: throw decoder.mismatch(key, Double.self, found: decoder.statement.value(at: i))
        }
    }

    private func value<T: Decodable>(_ i: Int32, _ key: Key, _ type: T.Type) throws -> T {
        let value = decoder.statement.value(at: i)
        do {
            return try ColumnValue.decode(T.self, from: value)
        } catch let mismatch as ColumnValue.Mismatch {
            throw decoder.mismatch(key, T.self, found: mismatch.found, detail: mismatch.detail)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try bool(column(key, type), key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try string(column(key, type), key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try double(column(key, type), key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try double(column(key, type), key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(column(key, type), key, type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(column(key, type), key, type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(column(key, type), key, type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(column(key, type), key, type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(column(key, type), key, type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(column(key, type), key, type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(column(key, type), key, type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(column(key, type), key, type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(column(key, type), key, type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(column(key, type), key, type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(column(key, type), key, type) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try present(key).map { try bool($0, key) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try present(key).map { try string($0, key) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try present(key).map { try double($0, key) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try present(key).map { Float(try double($0, key)) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try present(key).map { try integer($0, key, type) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try present(key).map { try value($0, key, type) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw GQLError(
            .decoding, "nested containers are not supported for column '\(key.stringValue)'",
            table: decoder.schema.name, column: key.stringValue)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw GQLError(
            .decoding, "nested containers are not supported for column '\(key.stringValue)'",
            table: decoder.schema.name, column: key.stringValue)
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}
