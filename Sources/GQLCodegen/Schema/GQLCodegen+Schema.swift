import Foundation
import GQLCore
import GraphQL

extension GQLCodegen {
    /// A GraphQL schema read for generation, from SDL or from an introspection answer.
    ///
    /// Real schemas are read as they are published: a field or enum value defined twice is a warning naming both
    /// places (the first definition is kept); only what cannot be generated is refused — two types of one name,
    /// a field defined twice with different types, a type that is used but defined nowhere.
    ///
    /// ```swift
    /// let schema = try GQLCodegen.Schema(sdl: try String(contentsOfFile: "schema.graphql"), name: "schema.graphql")
    /// schema.warnings.forEach { print($0) }
    /// ```
    public struct Schema: Sendable {
        /// The schema's types by name, the built-in scalars included.
        let types: [String: SchemaType]
        /// The root operation types' names.
        let query: String, mutation: String?, subscription: String?
        /// Object type names by each interface and union they belong to.
        let possibleTypes: [String: Set<String>]
        /// What was read but left out, each by place.
        public let warnings: [Diagnostic]
        /// The name diagnostics give the schema's file.
        let file: String

        /// Reads SDL text; `name` names the file in diagnostics.
        ///
        /// - Throws: ``Failure`` for a syntax error or what cannot be generated.
        public init(sdl: String, name: String) throws {
            try NestingGuard.check(sdl, file: name)
            let document: GraphQL.Document
            do {
                document = try GraphQL.parse(source: Source(body: sdl, name: name))
            } catch let error as GraphQLError {
                throw Failure([Diagnostic(syntax: error, file: name)])
            }
            var builder = SchemaBuilder(file: name)
            builder.read(document)
            try self.init(builder)
        }

        /// Reads an introspection answer (`{"data": {"__schema": …}}` or `{"__schema": …}`).
        ///
        /// - Throws: ``Failure`` when it is not an introspection answer or cannot be generated.
        public init(introspection json: String, name: String) throws {
            try self.init(sdl: try Self.sdl(introspection: json, name: name), name: name)
        }

        init(_ builder: SchemaBuilder) throws {
            let errors = builder.diagnostics.filter { $0.severity == .error }
            guard errors.isEmpty else { throw Failure(errors) }
            var possible: [String: Set<String>] = [:]
            for type in builder.types.values where type.kind == .object {
                for interface in type.interfaces { possible[interface, default: []].insert(type.name) }
            }
            for type in builder.types.values where type.kind == .union {
                possible[type.name] = Set(type.members)
            }
            for type in builder.types.values where type.kind == .interface {
                // Interfaces implementing interfaces: an object of the inner one is one of the outer.
                for outer in type.interfaces { possible[outer, default: []].formUnion(possible[type.name] ?? []) }
            }
            types = builder.types
            query = builder.roots[.query] ?? "Query"
            mutation = builder.roots[.mutation] ?? (builder.types["Mutation"] != nil ? "Mutation" : nil)
            subscription = builder.roots[.subscription] ?? (builder.types["Subscription"] != nil ? "Subscription" : nil)
            possibleTypes = possible
            warnings = builder.diagnostics
            file = builder.file
        }

        /// The object types a value of type `name` may be: itself for an object, its members for a union or an
        /// interface.
        func possible(_ name: String) -> Set<String> {
            guard let type = types[name] else { return [] }
            return type.kind == .object ? [name] : possibleTypes[name] ?? []
        }

        /// The root type of an operation kind.
        func root(_ operation: OperationType) -> String? {
            switch operation {
            case .query: query
            case .mutation: mutation
            case .subscription: subscription
            }
        }
    }
}

/// One named type of a schema.
struct SchemaType: Sendable {
    enum Kind: String, Sendable { case scalar, object, interface, union, `enum`, inputObject = "input object" }
    var name: String
    var kind: Kind
    var fields: [String: FieldDefinition] = [:]
    var fieldOrder: [String] = []
    var interfaces: [String] = []
    var members: [String] = []
    var enumValues: [String] = []
    var inputFields: [InputDefinition] = []
    /// Whether the type is marked `@model` (AppSync's model transform).
    var isModel = false
    /// The field marked `@primaryKey`, when one is.
    var primaryKey: String?
    /// Its `sortKeyFields`: with them the key is composite, which a GQLStore table's one key column cannot hold.
    var sortKeyFields: [String] = []
    /// Where the type is defined.
    var line = 1
    var column = 1

    var isComposite: Bool { kind == .object || kind == .interface || kind == .union }
    var isAbstract: Bool { kind == .interface || kind == .union }
    var isInput: Bool { kind == .scalar || kind == .enum || kind == .inputObject }
}

/// A field of an object or interface type.
struct FieldDefinition: Sendable {
    var name: String
    var type: TypeReference
    var arguments: [InputDefinition]
}

/// An argument or an input object's field.
struct InputDefinition: Sendable {
    var name: String
    var type: TypeReference
    var hasDefault: Bool
}

/// A type as a field, an argument or a variable declares it.
indirect enum TypeReference: Sendable, Hashable, CustomStringConvertible {
    case named(String)
    case list(TypeReference)
    case nonNull(TypeReference)

    init(_ type: any GraphQL.`Type`) {
        if let nonNull = type as? NonNullType {
            self = .nonNull(TypeReference(nonNull.type))
        } else if let list = type as? ListType {
            self = .list(TypeReference(list.type))
        } else if let named = type as? NamedType {
            self = .named(named.name.value)
        } else {
            self = .named("")
        }
    }

    /// The named type inside the lists and non-nulls.
    var name: String {
        switch self {
        case .named(let name): name
        case .list(let inner), .nonNull(let inner): inner.name
        }
    }

    var isNonNull: Bool { if case .nonNull = self { true } else { false } }

    var nullable: TypeReference { if case .nonNull(let inner) = self { inner } else { self } }

    var description: String {
        switch self {
        case .named(let name): name
        case .list(let inner): "[\(inner)]"
        case .nonNull(let inner): "\(inner)!"
        }
    }
}
