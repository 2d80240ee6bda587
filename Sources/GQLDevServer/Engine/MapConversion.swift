import Foundation
import GQLCore
import GraphQL

/// Conversions between GraphQLSwift's `Map`, the toolkit's ``GQLValue`` and the plain Swift values resolvers
/// return (GraphQLSwift resolves object fields from `[String: any Sendable]`, and treats `Map.null` as a value,
/// so resolvers hand back Swift `nil` and dictionaries).
enum MapConversion {
    /// A `Map` as a ``GQLValue``; `undefined` becomes `nil` (absent).
    static func value(_ map: Map) -> GQLValue? {
        switch map {
        case .undefined: return nil
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let number): return value(number)
        case .string(let s): return .string(s)
        case .array(let elements): return .array(elements.map { value($0) ?? .null })
        case .dictionary(let members):
            var object = GQLValues(minimumCapacity: members.count)
            for (key, member) in members {
                if let converted = value(member) { object[key] = converted }
            }
            return .object(object)
        }
    }

    static func value(_ number: Number) -> GQLValue {
        switch number.storageType {
        case .bool: return .bool(number.boolValue)
        case .int: return .int(Int64(number.intValue))
        case .double: return .double(number.doubleValue)
        case .unknown:
            let d = number.doubleValue
            if d.rounded() == d, abs(d) < 9e15 { return .int(Int64(d)) }
            return .double(d)
        }
    }

    /// A ``GQLValue`` as a `Map` (data as base64 text), for variables.
    static func map(_ value: GQLValue) -> Map {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .number(Number(Int(truncatingIfNeeded: i)))
        case .double(let d): return .number(Number(d))
        case .string(let s): return .string(s)
        case .data(let d): return .string(d.base64EncodedString())
        case .array(let elements): return .array(elements.map(map))
        case .object(let members):
            var dictionary = Map.dictionary([:]).dictionary ?? [:]
            for key in members.keys.sorted() {
                if let member = members[key] { dictionary[key] = map(member) }
            }
            return .dictionary(dictionary)
        }
    }

    /// Variables for execution.
    static func variables(_ values: GQLValues) -> [String: Map] {
        values.mapValues(map)
    }

    /// A ``GQLValue`` as the Swift value a resolver returns: `nil` for null, `[String: any Sendable]` for
    /// objects, `[(any Sendable)?]` for arrays.
    static func native(_ value: GQLValue) -> (any Sendable)? {
        switch value {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return Int(truncatingIfNeeded: i)
        case .double(let d): return d
        case .string(let s): return s
        case .data(let d): return d.base64EncodedString()
        case .array(let elements): return elements.map { native($0) } as [(any Sendable)?]
        case .object(let members): return nativeObject(members)
        }
    }

    static func nativeObject(_ members: GQLValues) -> [String: any Sendable] {
        var object = [String: any Sendable](minimumCapacity: members.count)
        for (key, member) in members {
            if let converted = native(member) { object[key] = converted }
        }
        return object
    }

    /// A `Map` for error `extensions` (the current item of a conflict).
    static func extensionMap(_ value: GQLValue) -> Map { map(value) }
}
