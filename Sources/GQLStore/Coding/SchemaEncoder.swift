import Foundation
import GQLCore

/// Learns a table's columns by encoding a type's default `init()` instance and recording each key,
/// the kind of value it holds, and whether it went through `encodeIfPresent` (an optional property).
final class SchemaEncoder: Encoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    fileprivate(set) var columns: [TableSchema.Column] = []
    fileprivate var problem: String?
    fileprivate var sawKeyed = false

    static func schema<T: GQLObject>(of type: T.Type) throws -> TableSchema {
        let encoder = SchemaEncoder()
        let name = T.tableName()
        do {
            try T().encode(to: encoder)
        } catch let error as GQLError {
            throw error
        } catch {
            throw GQLError(.encoding, "cannot learn the columns of \(name): \(error)", table: name)
        }
        if let problem = encoder.problem {
            throw GQLError(.encoding, "\(name) cannot be stored: \(problem)", table: name)
        }
        guard encoder.sawKeyed, !encoder.columns.isEmpty else {
            throw GQLError(
                .encoding, "\(name) must encode as a keyed container with at least one property", table: name)
        }
        return try TableSchema(name: name, columns: encoder.columns, primaryKey: T.primaryKey())
    }

    fileprivate func record(_ key: any CodingKey, _ kind: TableSchema.Kind, nullable: Bool, _ value: GQLValue) {
        guard !columns.contains(where: { $0.name == key.stringValue }) else {
            problem = "the key '\(key.stringValue)' is encoded twice"
            return
        }
        columns.append(.init(name: key.stringValue, kind: kind, nullable: nullable, defaultValue: value))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if sawKeyed || !codingPath.isEmpty {
            problem = "it uses nested keyed containers; give the nested part a Codable type of its own"
        }
        sawKeyed = true
        return KeyedEncodingContainer(SchemaKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        problem = "a stored type must encode as a keyed container, not an array"
        return NoopUnkeyed(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        problem = "a stored type must encode as a keyed container, not a single value"
        return NoopSingle()
    }
}

private struct SchemaKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: SchemaEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { encoder.record(key, .any, nullable: true, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        encoder.record(key, .bool, nullable: false, .bool(value))
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        encoder.record(key, .text, nullable: false, .string(value))
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        encoder.record(key, .real, nullable: false, .double(value))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        encoder.record(key, .real, nullable: false, .double(Double(value)))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: Int16, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: Int32, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: Int64, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        encoder.record(key, .integer, nullable: false, value.gqlValue)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let (kind, defaultValue) = try ColumnValue.kind(of: value)
        encoder.record(key, kind, nullable: kind == .any, defaultValue)
    }

    // Optionals: the synthesized code calls these for every optional property, nil or not.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { optional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            let (kind, _) = try ColumnValue.kind(of: value)
            encoder.record(key, kind, nullable: true, .null)
        } else {
            encoder.record(key, ColumnValue.kind(of: T.self), nullable: true, .null)
        }
    }

    private func optional<T: Encodable>(_ value: T?, _ key: Key) {
        encoder.record(key, ColumnValue.kind(of: T.self), nullable: true, .null)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.problem = "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own"
        return KeyedEncodingContainer(SchemaKeyedContainer<NestedKey>(encoder: SchemaEncoder()))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.problem = "the key '\(key.stringValue)' uses a nested container; give it a Codable type of its own"
        return NoopUnkeyed(encoder: encoder)
    }

    mutating func superEncoder() -> any Encoder {
        encoder.problem = "superEncoder() is not supported; flatten the stored type's keys"
        return SchemaEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// Swallows what an unsupported shape encodes; the encoder has already noted the problem.
struct NoopUnkeyed: UnkeyedEncodingContainer {
    let encoder: any Encoder
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    { KeyedEncodingContainer(SchemaKeyedContainer<NestedKey>(encoder: SchemaEncoder())) }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { encoder }
}

struct NoopSingle: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
}
