import Foundation
import GQLCore

/// Turns an object into its column values, in the schema's column order.
///
/// Keys arrive in declaration order, which is the schema's order, so each key is first compared with the
/// expected column and only looked up by name when the order differs (a hand-written `encode(to:)`).
final class RowEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    let schema: TableSchema
    var values: [GQLValue]
    fileprivate var cursor = 0
    fileprivate var problem: GQLError?

    init(schema: TableSchema) {
        self.schema = schema
        self.values = Array(repeating: .null, count: schema.columns.count)
    }

    /// The column values of `object`.
    static func values<T: Encodable>(of object: T, schema: TableSchema) throws -> [GQLValue] {
        let encoder = RowEncoder(schema: schema)
        try encoder.encode(object)
        return encoder.values
    }

    /// Encodes `object` into ``values``, reusing this encoder (values reset to NULL first).
    func encode<T: Encodable>(_ object: T) throws {
        for i in values.indices { values[i] = .null }
        cursor = 0
        problem = nil
        try object.encode(to: self)
        if let problem { throw problem }
    }

    @inline(__always)
    fileprivate func set(_ key: some CodingKey, _ value: GQLValue) {
        let name = key.stringValue
        if cursor < schema.columns.count, schema.columns[cursor].name == name {
            values[cursor] = value
            cursor += 1
        } else if let index = schema.columnIndex[name] {
            values[index] = value
            cursor = index + 1
        } else {
            problem = GQLError(
                .encoding, "\(schema.name) encoded the key '\(name)', which its table has no column for",
                table: schema.name, column: name)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        problem = GQLError(.encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopUnkeyed(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        problem = GQLError(.encoding, "\(schema.name) must encode as a keyed container", table: schema.name)
        return NoopSingle()
    }
}

private struct RowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.set(key, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.set(key, .bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { encoder.set(key, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { encoder.set(key, .double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { encoder.set(key, .double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { encoder.set(key, .int(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encode(UInt64(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { encoder.set(key, .int(Int64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        guard let exact = Int64(exactly: value) else {
            throw GQLError(
                .invalidValue, "\(value) is too large for an SQLite integer",
                table: encoder.schema.name, column: key.stringValue)
        }
        encoder.set(key, .int(exact))
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        encoder.set(key, try ColumnValue.encode(value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return KeyedEncodingContainer(RowKeyedContainer<NestedKey>(encoder: RowEncoder(schema: encoder.schema)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.problem = GQLError(
            .encoding, "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own",
            table: encoder.schema.name, column: key.stringValue)
        return NoopUnkeyed(encoder: encoder)
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}
