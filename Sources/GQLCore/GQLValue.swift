import Foundation

/// A JSON value: the currency of the toolkit's dictionary API, SQL arguments and GraphQL variables.
///
/// `GQLValue` is `Sendable`, `Hashable` and `Codable`, and it can be written as a literal:
///
/// ```swift
/// let values: GQLValues = ["userId": 1001, "name": "John Smith", "approved": false, "tags": ["a", "b"]]
/// ```
///
/// Besides the six JSON kinds it has a `data` case so that SQLite BLOBs round-trip through the
/// dictionary API unchanged. In JSON text a `data` value is written as a base64 string. Its bytes are held in a box
/// of their own (`indirect`): a copy of a value is then a retain of each reference it holds (none for a scalar or a
/// short string, one for a longer string, data, an array or an object of up to ``GQLValues/linearLimit`` members,
/// two for a larger object: its members and their index), which the compiler can pair with their releases and
/// leave out, where Foundation's `Data` inline (an enum of several layouts) made every copy of every value an
/// outlined call, kept even where the value was only looked at (an object's member compared by name).
///
/// An object keeps its members in order (``GQLValues``): a literal's written order, a JSON document's, a GraphQL
/// answer's (the order the query selected its fields in). Two objects with the same members in another order are
/// equal, as JSON objects are.
public enum GQLValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    indirect case data(Data)
    case array([GQLValue])
    /// An object, its members in order (see ``GQLValues``).
    case object(GQLValues)

    /// An object of a dictionary's members, in key order (a dictionary has no order of its own). Disfavored, so
    /// that `.object(["b": 2, "a": 1])` is the case itself, its members in written order.
    ///
    /// ```swift
    /// let value = GQLValue.object(["b": 2, "a": 1] as [String: GQLValue])   // {"a":1,"b":2}
    /// ```
    @_disfavoredOverload
    public static func object(_ dictionary: [String: GQLValue]) -> GQLValue { .object(GQLValues(dictionary)) }
}

extension GQLValue {
    /// Whether this value is `null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The boolean, or `nil` for any other kind.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    /// The integer, also from a double with no fractional part; `nil` otherwise.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }

    /// The number as a double, from an int or a double; `nil` otherwise.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The string, or `nil` for any other kind.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    /// The bytes of a `data` value, or of a base64 string; `nil` otherwise.
    public var dataValue: Data? {
        switch self {
        case .data(let d): d
        case .string(let s): Data(base64Encoded: s)
        default: nil
        }
    }

    /// The elements of an array, or `nil` for any other kind.
    public var arrayValue: [GQLValue]? { if case .array(let a) = self { a } else { nil } }

    /// The members of an object, or `nil` for any other kind.
    public var objectValue: GQLValues? { if case .object(let o) = self { o } else { nil } }

    /// The member named `key` of an object; `nil` for a missing member or another kind.
    public subscript(key: String) -> GQLValue? {
        if case .object(let o) = self { o[key] } else { nil }
    }

    /// The element at `index` of an array; `nil` when out of range or for another kind.
    public subscript(index: Int) -> GQLValue? {
        if case .array(let a) = self, a.indices.contains(index) { a[index] } else { nil }
    }

    /// A short name for the kind of value, as error messages use it.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "Bool"
        case .int: "Int"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .array: "Array"
        case .object: "Object"
        }
    }
}

// MARK: - Literals

extension GQLValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension GQLValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension GQLValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension GQLValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension GQLValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension GQLValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: GQLValue...) { self = .array(elements) }
}

extension GQLValue: ExpressibleByDictionaryLiteral {
    /// An object, its members in written order.
    public init(dictionaryLiteral elements: (String, GQLValue)...) {
        var object = GQLValues(minimumCapacity: elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension GQLValue: CustomStringConvertible {
    /// The value as compact JSON text, object members in order.
    public var description: String { (try? jsonString()) ?? "<invalid JSON value>" }
}
