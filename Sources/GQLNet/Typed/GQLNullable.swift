import GQLCore

/// An input object's nullable field: left out, sent as `null`, or sent with a value. The three differ to a
/// server: an update mutation leaves an absent field alone and clears a null one.
///
/// ```swift
/// let input = UpdateUserInput(id: "1", name: "Ann", nickname: .null, age: .absent)
/// let same = UpdateUserInput(id: "1", name: "Ann", nickname: nil)   // nil is null; absent is the default
/// let value: GQLNullable<String> = "Ann"                             // literals are values
/// ```
public indirect enum GQLNullable<Wrapped: GQLValueConvertible & Hashable>: Hashable, Sendable, GQLValueConvertible,
    ExpressibleByNilLiteral, GQLOmittable
{
    /// Not sent: the server keeps what it has (or applies its default).
    case absent
    /// Sent as `null`.
    case null
    /// Sent as the value.
    case value(Wrapped)

    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }

    /// ``value(_:)`` for a value, ``null`` for nil.
    ///
    /// ```swift
    /// let nickname: String? = nil
    /// let field = GQLNullable(nickname)   // .null
    /// ```
    public init(_ optional: Wrapped?) {
        self = optional.map(Self.value) ?? .null
    }

    /// The value, or nil when absent or null.
    public var wrapped: Wrapped? { if case .value(let value) = self { value } else { nil } }

    public var gqlValue: GQLValue {
        if case .value(let value) = self { value.gqlValue } else { .null }
    }

    var isAbsent: Bool { if case .absent = self { true } else { false } }
}

extension GQLNullable: ExpressibleByStringLiteral, ExpressibleByExtendedGraphemeClusterLiteral,
    ExpressibleByUnicodeScalarLiteral
where Wrapped: ExpressibleByStringLiteral, Wrapped.StringLiteralType == String {
    public init(stringLiteral value: String) { self = .value(Wrapped(stringLiteral: value)) }
}

extension GQLNullable: ExpressibleByIntegerLiteral where Wrapped: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Wrapped.IntegerLiteralType) { self = .value(Wrapped(integerLiteral: value)) }
}

extension GQLNullable: ExpressibleByFloatLiteral where Wrapped: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Wrapped.FloatLiteralType) { self = .value(Wrapped(floatLiteral: value)) }
}

extension GQLNullable: ExpressibleByBooleanLiteral where Wrapped: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Wrapped.BooleanLiteralType) { self = .value(Wrapped(booleanLiteral: value)) }
}
