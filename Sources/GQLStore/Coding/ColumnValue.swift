import Foundation
import GQLCore

/// How a property value that is not a plain number, string or bool becomes a column value and back.
///
/// Dates are text in the ``GQLDate`` format, `Data` is a BLOB, ``GQLValue`` is JSON text. Any other Codable
/// type is encoded on its own: a single value (UUID, URL, a raw-value enum) is stored as that value, and
/// anything with members or elements (nested structs, arrays, dictionaries) as JSON text.
enum ColumnValue {
    static func encode<T: Encodable>(_ value: T) throws -> GQLValue {
        switch value {
        case let date as Date: return .string(GQLDate.string(from: date))
        case let data as Data: return .data(data)
        case let json as GQLValue: return .string(try json.jsonString())
        default:
            let encoded = try GQLValue(encoding: value)
            switch encoded {
            case .array, .object: return .string(try encoded.jsonString())
            default: return encoded
            }
        }
    }

    /// The column kind and default value of a property's value.
    static func kind<T: Encodable>(of value: T) throws -> (TableSchema.Kind, GQLValue) {
        switch value {
        case is Date: return (.date, try encode(value))
        case is Data: return (.blob, try encode(value))
        case is GQLValue: return (.json, try encode(value))
        default:
            switch try GQLValue(encoding: value) {
            case .null: return (.any, .null)
            case .bool(let b): return (.bool, .bool(b))
            case .int(let i): return (.integer, .int(i))
            case .double(let d): return (.real, .double(d))
            case .string(let s): return (.text, .string(s))
            case .data(let d): return (.blob, .data(d))
            case let nested: return (.json, .string(try nested.jsonString()))
            }
        }
    }

    /// The column kind of a type when no value is at hand (a `nil` optional).
    static func kind(of type: Any.Type) -> TableSchema.Kind {
        switch type {
        case is Date.Type: .date
        case is Data.Type: .blob
        case is GQLValue.Type: .json
        case is String.Type: .text
        case is Bool.Type: .bool
        case is Double.Type, is Float.Type: .real
        case is any FixedWidthInteger.Type: .integer
        case let decodable as any Decodable.Type: KindProbe.kind(of: decodable)
        default: .any
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: GQLValue) throws -> T {
        if T.self == Date.self {
            guard case .string(let text) = value else { throw Mismatch(found: value) }
            guard let date = try? GQLDate.date(from: text) as? T else { throw Mismatch(found: value) }
            return date
        }
        if T.self == Data.self {
            switch value {
            case .data(let d): if let d = d as? T { return d }
            case .string(let s): if let d = Data(s.utf8) as? T { return d }
            default: break
            }
            throw Mismatch(found: value)
        }
        if T.self == GQLValue.self {
            if case .string(let text) = value, let parsed = try? GQLValue(json: text), let v = parsed as? T {
                return v
            }
            if let v = value as? T { return v }
        }
        if let direct = try? value.decode(T.self) { return direct }
        if case .string(let text) = value, let parsed = try? GQLValue(json: text) {
            do {
                return try parsed.decode(T.self)
            } catch let error as GQLError {
                throw Mismatch(found: value, detail: error.message)
            }
        }
        throw Mismatch(found: value)
    }

    /// A value that does not fit the property; the row decoder adds table, column and type.
    struct Mismatch: Error {
        var found: GQLValue
        var detail: String? = nil
    }
}

extension GQLValue {
    /// How a stored value is named in decoding errors: its SQL kind and a short excerpt.
    var storedDescription: String {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return "INTEGER \(b ? 1 : 0)"
        case .int(let i): return "INTEGER \(i)"
        case .double(let d): return "REAL \(d)"
        case .string(let s):
            let excerpt = s.count > 40 ? String(s.prefix(40)) + "…" : s
            return "TEXT '\(excerpt)'"
        case .data(let d): return "BLOB of \(d.count) bytes"
        case .array, .object: return "JSON \(description.prefix(40))"
        }
    }
}
