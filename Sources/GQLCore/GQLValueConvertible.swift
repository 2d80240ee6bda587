import Foundation

/// A Swift value that can stand wherever the toolkit takes input: values to write, keys, SQL arguments and
/// GraphQL variables.
///
/// Bool, the integer and floating-point types, String, Date, Data, optionals, arrays, string-keyed
/// dictionaries and ``GQLValue`` itself adopt it, so plain variables work as well as literals:
///
/// ```swift
/// let newAge = 43
/// try User.updateAll(db, ["age": newAge], "name = ?", [name])
/// ```
public protocol GQLValueConvertible: Sendable {
    /// The value as a ``GQLValue``.
    var gqlValue: GQLValue { get }
}

extension GQLValue: GQLValueConvertible {
    public var gqlValue: GQLValue { self }

    /// The value of any convertible Swift value: `GQLValue(date)` is the date's ISO 8601 text,
    /// `GQLValue(data)` its bytes, `GQLValue(age)` an `.int`.
    ///
    /// ```swift
    /// let value = GQLValue(Date(timeIntervalSince1970: 3661))   // "1970-01-01T01:01:01.000Z"
    /// ```
    public init(_ value: some GQLValueConvertible) {
        self = value.gqlValue
    }
}

extension Bool: GQLValueConvertible {
    public var gqlValue: GQLValue { .bool(self) }
}

extension String: GQLValueConvertible {
    public var gqlValue: GQLValue { .string(self) }
}

extension Substring: GQLValueConvertible {
    public var gqlValue: GQLValue { .string(String(self)) }
}

extension Int: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension Int8: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension Int16: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension Int32: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension Int64: GQLValueConvertible { public var gqlValue: GQLValue { .int(self) } }
extension UInt8: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension UInt16: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }
extension UInt32: GQLValueConvertible { public var gqlValue: GQLValue { .int(Int64(self)) } }

/// Values above `Int64.max` become a decimal string, so nothing is rounded.
extension UInt64: GQLValueConvertible {
    public var gqlValue: GQLValue {
        self <= UInt64(Int64.max) ? .int(Int64(self)) : .string(String(self))
    }
}

/// Values above `Int64.max` become a decimal string, so nothing is rounded.
extension UInt: GQLValueConvertible {
    public var gqlValue: GQLValue { UInt64(self).gqlValue }
}

extension Double: GQLValueConvertible { public var gqlValue: GQLValue { .double(self) } }
extension Float: GQLValueConvertible { public var gqlValue: GQLValue { .double(Double(self)) } }

/// A date becomes its text in the current ``GQLDate`` format.
extension Date: GQLValueConvertible {
    public var gqlValue: GQLValue { .string(GQLDate.string(from: self)) }
}

extension Data: GQLValueConvertible {
    public var gqlValue: GQLValue { .data(self) }
}

extension Optional: GQLValueConvertible where Wrapped: GQLValueConvertible {
    public var gqlValue: GQLValue { self?.gqlValue ?? .null }
}

extension Array: GQLValueConvertible where Element: GQLValueConvertible {
    public var gqlValue: GQLValue { .array(map(\.gqlValue)) }
}

extension Dictionary: GQLValueConvertible where Key == String, Value: GQLValueConvertible {
    public var gqlValue: GQLValue { .object(mapValues(\.gqlValue)) }
}

/// Marks a `nil` for places that take `any GQLValueConvertible` (an untyped `nil` literal has no type there).
public let GQLNull: GQLValue = .null
