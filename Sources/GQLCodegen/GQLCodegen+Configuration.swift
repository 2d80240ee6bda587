import Foundation
import GQLCore

extension GQLCodegen {
    /// What the generator writes: the Swift type of each custom scalar, the access level, Encodable.
    ///
    /// Read from a JSON config file (`gql-cli codegen --config codegen.json`, or `codegen.json` beside the
    /// schema for the build plugin):
    /// ```json
    /// { "scalars": { "DateTime": "Date", "URI": "String" }, "access": "internal", "encodable": true,
    ///   "models": { "Objects": "objectId" } }
    /// ```
    /// `models` is `true` (a model for every `@model` type), a list of type names or an object of type names and
    /// key fields; without it no models are generated.
    public struct Configuration: Sendable, Hashable, Codable {
        /// Swift types for custom scalars, over ``builtInScalars``. A scalar named nowhere is a `String`.
        public var scalars: [String: String]
        /// `public` (default) or `internal`: the access level of everything generated.
        public var access: String
        /// Whether the answers' types are `Encodable` too (to keep them in a file or a store).
        public var encodable: Bool
        /// An enum every generated type is nested in (`GitHub.IssueListQuery`), for apps that talk to several
        /// schemas; nil (default): top-level types.
        public var namespace: String?
        /// Object types to generate a `GQLObject` model for, each with the field that keys its table, or "" for
        /// the type's own key (its `@primaryKey`, else `id`). Empty (default): no models, unless ``allModels``.
        /// AppSync's published schemas, and introspected ones, carry no directives: name their types here.
        public var models: [String: String]
        /// Whether every type the schema marks `@model` gets a model too (`"models": true` in the JSON).
        public var allModels: Bool

        /// ```swift
        /// let configuration = GQLCodegen.Configuration(scalars: ["DateTime": "Date"], models: ["Objects": "objectId"])
        /// ```
        public init(
            scalars: [String: String] = [:], access: String = "public", encodable: Bool = false,
            namespace: String? = nil, models: [String: String] = [:], allModels: Bool = false
        ) {
            self.scalars = scalars
            self.access = access
            self.encodable = encodable
            self.namespace = namespace
            self.models = models
            self.allModels = allModels
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            scalars = try container.decodeIfPresent([String: String].self, forKey: .scalars) ?? [:]
            access = try container.decodeIfPresent(String.self, forKey: .access) ?? "public"
            encodable = try container.decodeIfPresent(Bool.self, forKey: .encodable) ?? false
            namespace = try container.decodeIfPresent(String.self, forKey: .namespace)
            allModels = try container.decodeIfPresent(Bool.self, forKey: .allModels) ?? false
            // "models": true (every @model type), a list of type names (each keyed by its own key) or an object
            // of type names and key fields.
            if let all = try? container.decodeIfPresent(Bool.self, forKey: .models) {
                allModels = allModels || all
                models = [:]
            } else if let names = try? container.decodeIfPresent([String].self, forKey: .models) {
                models = Dictionary(names.map { ($0, "") }, uniquingKeysWith: { first, _ in first })
            } else {
                models = try container.decodeIfPresent([String: String].self, forKey: .models) ?? [:]
            }
        }

        /// Reads a JSON config file's text.
        ///
        /// ```swift
        /// let configuration = try GQLCodegen.Configuration(json: try String(contentsOfFile: "codegen.json"))
        /// ```
        /// - Throws: ``GQLError`` `.invalidArgument` naming the file and what is wrong.
        public init(json: String, name: String = "config") throws {
            do {
                self = try JSONDecoder().decode(Configuration.self, from: Data(json.utf8))
            } catch let error as DecodingError {
                throw GQLError(.invalidArgument, "\(name): not a codegen config: \(GQLValue.describe(error))")
            }
            guard access == "public" || access == "internal" else {
                throw GQLError(
                    .invalidArgument, "\(name): access must be \"public\" or \"internal\", not \"\(access)\"")
            }
            if let namespace, !Self.isIdentifier(namespace) {
                throw GQLError(.invalidArgument, "\(name): the namespace \"\(namespace)\" is not a Swift type name")
            }
            for (scalar, type) in scalars where !Self.isSwiftType(type) {
                throw GQLError(
                    .invalidArgument, "\(name): the scalar \(scalar) maps to \"\(type)\", not a Swift type name")
            }
        }

        /// The scalars every schema has, and AWS AppSync's and Hasura's, as the generator maps them unless
        /// ``scalars`` says otherwise. AppSync sends dates and times as text in several ISO 8601 forms, so they
        /// stay `String`; `AWSJSON` is JSON in a string; Hasura's `jsonb` is any JSON value.
        public static let builtInScalars: [String: String] = [
            "ID": "String", "String": "String", "Int": "Int", "Float": "Double", "Boolean": "Bool",
            "AWSDateTime": "String", "AWSDate": "String", "AWSTime": "String", "AWSTimestamp": "Int",
            "AWSJSON": "String", "AWSEmail": "String", "AWSURL": "String", "AWSPhone": "String",
            "AWSIPAddress": "String",
            "uuid": "String", "timestamptz": "String", "jsonb": "GQLValue", "json": "GQLValue", "numeric": "Double",
            "bigint": "Int",
        ]

        /// The Swift type of scalar `name`.
        func swiftType(ofScalar name: String) -> String {
            scalars[name] ?? Self.builtInScalars[name] ?? "String"
        }

        /// A plain identifier: a letter or `_`, then letters, digits or `_`.
        static func isIdentifier(_ text: String) -> Bool {
            guard let first = text.unicodeScalars.first, CharacterSet.letters.contains(first) || first == "_" else {
                return false
            }
            return text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" }
                && !Naming.keywords.contains(text)
        }

        /// A dotted Swift type name, possibly generic (`Foundation.Date`, `[String: Int]`), without code in it.
        static func isSwiftType(_ text: String) -> Bool {
            !text.isEmpty && text.count < 200
                && text.unicodeScalars.allSatisfy {
                    CharacterSet.alphanumerics.contains($0) || "_.<>[]:, ?".unicodeScalars.contains($0)
                }
        }
    }
}
