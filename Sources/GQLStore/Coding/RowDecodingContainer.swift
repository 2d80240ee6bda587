import CSQLite
import GQLCore

/// The keyed container of ``RowDecoder``: each field is read at its column index, with no intermediate values.
struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The container is trivially copyable — the standard library's box copies it on every call — because it
    /// holds only a ``ColumnReader``, not a counted reference to the decoder (Docs/Performance.md).
    private let reader: ColumnReader
    private var decoder: RowDecoder { reader.decoder }
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { decoder.schema.columns.compactMap { Key(stringValue: $0.name) } }

    init(decoder: RowDecoder) {
        self.reader = decoder.reader
    }

    func contains(_ key: Key) -> Bool { decoder.schema.columnIndex[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { reader.present(key.stringValue) == nil }

    // Each kind is read at a known column index, so the plain and the optional forms share the work and
    // an optional costs one NULL check instead of the standard library's contains/decodeNil/decode.

    @inline(__always)
    private func column(_ key: Key, _ type: Any.Type) throws -> Int32 { try reader.column(key.stringValue, type) }

    @inline(__always)
    private func present(_ key: Key) -> Int32? { reader.present(key.stringValue) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ i: Int32, _ key: Key, _ type: T.Type) throws -> T {
        try reader.integer(i, type, key.stringValue)
    }

    @inline(__always)
    private func bool(_ i: Int32, _ key: Key) throws -> Bool { try reader.bool(i, key.stringValue) }

    @inline(__always)
    private func string(_ i: Int32, _ key: Key) throws -> String { try reader.string(i, key.stringValue) }

    @inline(__always)
    private func double(_ i: Int32, _ key: Key) throws -> Double { try reader.double(i, key.stringValue) }

    private func value<T: Decodable>(_ i: Int32, _ key: Key, _ type: T.Type) throws -> T {
        try reader.value(i, type, key.stringValue)
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
