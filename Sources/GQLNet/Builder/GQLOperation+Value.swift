import Foundation

extension GQLOperation {
    /// A GraphQL input value: what an argument, a directive argument or a variable default holds.
    ///
    /// Literals work directly; `.enum` and `.variable` name the two forms JSON has no word for, and
    /// ``init(_:)`` takes any ``GQLValueConvertible`` Swift value:
    ///
    /// ```swift
    /// let arguments: KeyValuePairs<String, GQLOperation.Value> = [
    ///     "id": .variable("id"),                      // $id
    ///     "orderBy": .enum("TITLE_ASC"),              // TITLE_ASC
    ///     "filter": ["year": 1977, "tags": ["a"]],    // {tags: ["a"], year: 1977}
    ///     "after": nil,                               // null
    ///     "limit": GQLOperation.Value(pageSize),      // a Swift Int
    /// ]
    /// ```
    ///
    /// Input object members are written in sorted order, so the same value always renders the same text.
    public indirect enum Value: Sendable, Hashable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// An integer.
        case int(Int64)
        /// A floating-point number; NaN and infinities cannot be written and make rendering throw.
        case float(Double)
        /// A string, quoted and escaped when rendered.
        case string(String)
        /// An enum value such as `ASC`, written without quotes; must be a name other than `true`, `false`, `null`.
        case `enum`(String)
        /// A reference to an operation variable, written `$name`.
        case variable(String)
        /// A list of values.
        case list([Value])
        /// An input object.
        case object([String: Value])

        /// The GraphQL form of a JSON value: objects become input objects, arrays lists, data base64 strings.
        ///
        /// ```swift
        /// let limit = GQLOperation.Value(25)          // .int(25)
        /// let input = GQLOperation.Value(["text": "hello", "done": false] as GQLValue)
        /// ```
        public init(_ value: some GQLValueConvertible) {
            self.init(json: value.gqlValue)
        }

        private init(json value: GQLValue) {
            switch value {
            case .null: self = .null
            case .bool(let b): self = .bool(b)
            case .int(let i): self = .int(i)
            case .double(let d): self = .float(d)
            case .string(let s): self = .string(s)
            case .data(let d): self = .string(d.base64EncodedString())
            case .array(let a): self = .list(a.map(Value.init(json:)))
            case .object(let o): self = .object(o.mapValues(Value.init(json:)))
            }
        }

        /// Whether the value, or a value inside it, is a variable (not allowed in a variable's default).
        ///
        /// Walks with an explicit stack, so a deeply nested value cannot exhaust the call stack.
        var containsVariable: Bool {
            var pending = [self]
            while let value = pending.popLast() {
                switch value {
                case .variable: return true
                case .list(let values): pending += values
                case .object(let members): pending += members.values
                default: continue
                }
            }
            return false
        }
    }

    /// A named argument of a field or a directive.
    ///
    /// Usually written as a dictionary literal in a ``Field`` or ``Directive`` initializer, which keeps the order:
    ///
    /// ```swift
    /// GQLOperation.Field("films", arguments: ["first": 10, "after": .variable("cursor")]) { "title" }
    /// ```
    public struct Argument: Sendable, Hashable {
        /// The argument's name.
        public var name: String
        /// The argument's value.
        public var value: Value

        /// Creates an argument.
        ///
        /// ```swift
        /// let argument = GQLOperation.Argument("id", .variable("id"))
        /// ```
        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// A directive such as `@include(if: $withDirector)`, attached to an operation, field, fragment or spread.
    ///
    /// ```swift
    /// GQLOperation.Field("director", directives: [.include(if: .variable("withDirector"))]) { "name" }
    /// GQLOperation.Field("cached", directives: [.init("cacheControl", arguments: ["maxAge": 60])])
    /// ```
    public struct Directive: Sendable, Hashable {
        /// The directive's name, without the `@`.
        public var name: String
        /// The directive's arguments, in order.
        public var arguments: [Argument]

        /// Creates a directive.
        ///
        /// ```swift
        /// let directive = GQLOperation.Directive("deprecated", arguments: ["reason": "use title"])
        /// ```
        public init(_ name: String, arguments: KeyValuePairs<String, Value> = [:]) {
            self.name = name
            self.arguments = arguments.map { Argument($0.key, $0.value) }
        }

        /// `@include(if: condition)`: the selection is kept only when `condition` is true.
        ///
        /// ```swift
        /// GQLOperation.Field("director", directives: [.include(if: .variable("withDirector"))]) { "name" }
        /// ```
        public static func include(if condition: Value) -> Directive {
            Directive("include", arguments: ["if": condition])
        }

        /// `@skip(if: condition)`: the selection is dropped when `condition` is true.
        ///
        /// ```swift
        /// GQLOperation.Field("synopsis", directives: [.skip(if: .variable("brief"))])
        /// ```
        public static func skip(if condition: Value) -> Directive {
            Directive("skip", arguments: ["if": condition])
        }
    }
}

extension GQLOperation.Value: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension GQLOperation.Value: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension GQLOperation.Value: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension GQLOperation.Value: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .float(value) }
}

extension GQLOperation.Value: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension GQLOperation.Value: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: GQLOperation.Value...) { self = .list(elements) }
}

extension GQLOperation.Value: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, GQLOperation.Value)...) {
        var members: [String: GQLOperation.Value] = [:]
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}
