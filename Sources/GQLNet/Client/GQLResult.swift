import GQLCore

/// What a GraphQL server answered to one operation: its `data` and its `errors`, both kept.
///
/// A response may carry data and errors together (a partial result): nothing is dropped.
///
/// ```swift
/// let result = try await server.query("{ listObjects { items { objectId } } }")
/// for error in result.errors { print(error.message, error.path) }
/// let items = result.data?["listObjects"]?["items"]
/// ```
public struct GQLResult: Sendable, Hashable {
    /// The `data` member; `nil` when the server sent none or sent `null`.
    public var data: GQLValue?
    /// The `errors` member, in the server's order; empty when there were none.
    public var errors: [Error]
    /// The `extensions` member of the response, when the server sent one.
    public var extensions: GQLValues?

    public init(data: GQLValue?, errors: [Error] = [], extensions: GQLValues? = nil) {
        self.data = data
        self.errors = errors
        self.extensions = extensions
    }

    /// One GraphQL error, in the wire shape of the GraphQL specification: message, locations, path, extensions.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// A place in the operation text, counted from 1.
        public struct Location: Sendable, Hashable {
            public var line: Int
            public var column: Int

            public init(line: Int, column: Int) {
                self.line = line
                self.column = column
            }
        }

        /// A step of the response path: a field name or a list index.
        public enum PathElement: Sendable, Hashable, CustomStringConvertible {
            case key(String)
            case index(Int)

            public var description: String {
                switch self {
                case .key(let key): key
                case .index(let index): String(index)
                }
            }
        }

        public var message: String
        public var locations: [Location]
        public var path: [PathElement]
        public var extensions: GQLValues?

        public init(
            message: String, locations: [Location] = [], path: [PathElement] = [], extensions: GQLValues? = nil
        ) {
            self.message = message
            self.locations = locations
            self.path = path
            self.extensions = extensions
        }

        public var description: String {
            var text = message
            if !path.isEmpty { text += " [path: \(path.map(\.description).joined(separator: "."))]" }
            if let location = locations.first { text += " [line \(location.line), column \(location.column)]" }
            return text
        }
    }

    /// The GraphQL errors of a response, thrown by the typed forms (``GQLServer/query(_:_:_:at:headers:)``),
    /// with whatever partial data the server sent alongside them.
    ///
    /// ```swift
    /// do {
    ///     let film = try await server.query(Film.self, query, ["id": 1], at: "film")
    /// } catch let failure as GQLResult.Failure {
    ///     print(failure.errors.map(\.message), failure.data ?? .null)
    /// }
    /// ```
    public struct Failure: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        public var errors: [GQLResult.Error]
        /// The partial `data` of the response, when there was some.
        public var data: GQLValue?

        public init(errors: [GQLResult.Error], data: GQLValue?) {
            self.errors = errors
            self.data = data
        }

        public var description: String {
            "GraphQL errors: " + errors.map(\.description).joined(separator: "; ")
        }
    }
}

extension GQLResult {
    /// Reads one response object (`{"data": …, "errors": […], "extensions": {…}}`).
    ///
    /// - Throws: ``GQLError`` `.invalidResponse` naming what is wrong when the value is not a GraphQL response.
    package init(response value: GQLValue) throws {
        guard case .object(let members) = value else {
            throw GQLError(.invalidResponse, "a GraphQL response must be a JSON object, not \(value.kindName)")
        }
        guard members["data"] != nil || members["errors"] != nil else {
            throw GQLError(.invalidResponse, "the response has neither `data` nor `errors`")
        }
        let data: GQLValue? = members["data"].flatMap { value in value.isNull ? Optional.none : value }
        var errors: [Error] = []
        switch members["errors"] {
        case nil, .null?: break
        case .array(let elements)?:
            errors = try elements.enumerated().map { try Error(wire: $0.element, index: $0.offset) }
        case let other?:
            throw GQLError(.invalidResponse, "`errors` must be an array, not \(other.kindName)")
        }
        self.init(data: data, errors: errors, extensions: members["extensions"]?.objectValue)
    }

    /// The value at a dotted key path in ``data`` (`"film"`, `"a.b"`, `"items.0"`).
    ///
    /// - Throws: ``GQLError`` `.notFound` naming the first missing step.
    package func value(at path: String) throws -> GQLValue {
        var value = data ?? .null
        var walked: [Substring] = []
        for step in path.split(separator: ".", omittingEmptySubsequences: false) {
            walked.append(step)
            let next = Int(step).flatMap { value[$0] } ?? value[String(step)]
            guard let next else {
                throw GQLError(.notFound, "no value at '\(walked.joined(separator: "."))' in the response data")
            }
            value = next
        }
        return value
    }
}

extension GQLResult.Error {
    /// The members AWS AppSync puts beside `message` instead of in `extensions` (its conflict errors carry
    /// `errorType` `ConflictUnhandled` and the server's item as `data` there).
    static let appSyncMembers = ["errorType", "errorInfo", "data"]

    /// Reads one error object; `index` names it in the message when it is malformed. AppSync's members beside
    /// `message` (``appSyncMembers``) are read into ``extensions`` where it does not have them already, so an
    /// AppSync error reads like one in the standard shape.
    init(wire value: GQLValue, index: Int) throws {
        guard case .object(let members) = value, let message = members["message"]?.stringValue else {
            throw GQLError(.invalidResponse, "errors[\(index)] is not an object with a string `message`")
        }
        let locations = (members["locations"]?.arrayValue ?? []).compactMap { location -> Location? in
            guard let line = location["line"]?.intValue, let column = location["column"]?.intValue else { return nil }
            return Location(line: Int(line), column: Int(column))
        }
        let path = (members["path"]?.arrayValue ?? []).compactMap { step -> PathElement? in
            if let key = step.stringValue { return .key(key) }
            if let index = step.intValue { return .index(Int(index)) }
            return nil
        }
        var extensions = members["extensions"]?.objectValue
        for name in Self.appSyncMembers {
            guard let member = members[name], extensions?[name] == nil else { continue }
            extensions = (extensions ?? [:]).merging([name: member]) { kept, _ in kept }
        }
        self.init(message: message, locations: locations, path: path, extensions: extensions)
    }
}

extension GQLResult {
    /// The result in the wire shape of a GraphQL response: `data` (`null` when there was none), then `errors` and
    /// `extensions` when present.
    ///
    /// ```swift
    /// print(try result.jsonValue.jsonString())   // {"data":{"listObjects":…},"errors":[…]}
    /// ```
    public var jsonValue: GQLValue {
        var members: GQLValues = ["data": data ?? .null]
        if !errors.isEmpty { members["errors"] = .array(errors.map(\.jsonValue)) }
        if let extensions { members["extensions"] = .object(extensions) }
        return .object(members)
    }
}

extension GQLResult.Error {
    /// The error as the GraphQL specification writes it: message, then locations, path and extensions when present.
    ///
    /// ```swift
    /// let wire = error.jsonValue   // {"message": "…", "path": ["film", 0]}
    /// ```
    public var jsonValue: GQLValue {
        var members: GQLValues = ["message": .string(message)]
        if !locations.isEmpty {
            members["locations"] = .array(
                locations.map { ["line": .int(Int64($0.line)), "column": .int(Int64($0.column))] })
        }
        if !path.isEmpty {
            members["path"] = .array(
                path.map { element in
                    switch element {
                    case .key(let key): .string(key)
                    case .index(let index): .int(Int64(index))
                    }
                })
        }
        if let extensions { members["extensions"] = .object(extensions) }
        return .object(members)
    }
}
