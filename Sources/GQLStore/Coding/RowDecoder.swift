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
    fileprivate var cursor = 0

    init(statement: Statement, schema: TableSchema) {
        self.statement = statement
        self.schema = schema
    }

    /// Decodes the current row.
    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        cursor = 0
        return try T(from: self)
    }

    /// The column of `key`, or `nil` when the table has none.
    @inline(__always)
    fileprivate func index(_ key: some CodingKey) -> Int32? {
        let name = key.stringValue
        let columns = schema.columns
        let c = cursor
        if c < columns.count, columns[c].name == name {
            cursor = c + 1
            return Int32(c)
        }
        if c > 0, columns[c - 1].name == name { return Int32(c - 1) }
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

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw GQLError(.decoding, "\(schema.name) must decode from a keyed container", table: schema.name)
    }
}

private struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.schema.columns.compactMap { Key(stringValue: $0.name) } }

    private var stmt: OpaquePointer { decoder.statement.stmt }

    func contains(_ key: Key) -> Bool { decoder.schema.columnIndex[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let i = decoder.index(key) else { return true }
        return sqlite3_column_type(stmt, i) == SQLITE_NULL
    }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ key: Key, _ type: T.Type) throws -> T {
        guard let i = decoder.index(key) else { throw decoder.missing(key, T.self) }
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER:
            if let v = T(exactly: sqlite3_column_int64(stmt, i)) { return v }
        case SQLITE_FLOAT:
            if let v = T(exactly: sqlite3_column_double(stmt, i)) { return v }
        default: break
        }
        throw decoder.mismatch(key, T.self, found: decoder.statement.value(at: i))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        guard let i = decoder.index(key) else { throw decoder.missing(key, Bool.self) }
        guard sqlite3_column_type(stmt, i) == SQLITE_INTEGER else {
            throw decoder.mismatch(key, Bool.self, found: decoder.statement.value(at: i))
        }
        return sqlite3_column_int64(stmt, i) != 0
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        guard let i = decoder.index(key) else { throw decoder.missing(key, String.self) }
        guard sqlite3_column_type(stmt, i) == SQLITE_TEXT else {
            throw decoder.mismatch(key, String.self, found: decoder.statement.value(at: i))
        }
        return decoder.statement.text(at: i)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        guard let i = decoder.index(key) else { throw decoder.missing(key, Double.self) }
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_column_double(stmt, i)
        default: throw decoder.mismatch(key, Double.self, found: decoder.statement.value(at: i))
        }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key, Int.self) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key, Int8.self) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key, Int16.self) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key, Int32.self) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key, Int64.self) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key, UInt.self) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key, UInt8.self) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key, UInt16.self) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key, UInt32.self) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key, UInt64.self) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let i = decoder.index(key) else { throw decoder.missing(key, T.self) }
        let value = decoder.statement.value(at: i)
        do {
            return try ColumnValue.decode(T.self, from: value)
        } catch let mismatch as ColumnValue.Mismatch {
            throw decoder.mismatch(key, T.self, found: mismatch.found, detail: mismatch.detail)
        }
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
