import Foundation
import GQLCore

/// Finds the column kind of a Decodable type without an instance (a `nil` optional property), by starting to
/// decode it and noting what it asks for: members or elements mean JSON, a single value means that value's kind.
enum KindProbe {
    private struct Found: Error {
        let kind: TableSchema.Kind
    }

    static func kind(of type: any Decodable.Type) -> TableSchema.Kind {
        do {
            _ = try type.init(from: ProbeDecoder())
        } catch let found as Found {
            return found.kind
        } catch {}
        return .any
    }

    private struct ProbeDecoder: Decoder {
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw Found(kind: .json)
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Found(kind: .json) }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { ProbeSingle() }
    }

    private struct ProbeSingle: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) throws -> Bool { throw Found(kind: .bool) }
        func decode(_ type: String.Type) throws -> String { throw Found(kind: .text) }
        func decode(_ type: Double.Type) throws -> Double { throw Found(kind: .real) }
        func decode(_ type: Float.Type) throws -> Float { throw Found(kind: .real) }
        func decode(_ type: Int.Type) throws -> Int { throw Found(kind: .integer) }
        func decode(_ type: Int8.Type) throws -> Int8 { throw Found(kind: .integer) }
        func decode(_ type: Int16.Type) throws -> Int16 { throw Found(kind: .integer) }
        func decode(_ type: Int32.Type) throws -> Int32 { throw Found(kind: .integer) }
        func decode(_ type: Int64.Type) throws -> Int64 { throw Found(kind: .integer) }
        func decode(_ type: UInt.Type) throws -> UInt { throw Found(kind: .integer) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { throw Found(kind: .integer) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { throw Found(kind: .integer) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { throw Found(kind: .integer) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { throw Found(kind: .integer) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw Found(kind: ColumnValue.kind(of: T.self))
        }
    }
}
