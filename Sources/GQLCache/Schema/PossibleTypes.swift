import GQLCore
import GraphQL

extension GQLCache.Configuration {
    /// Sets ``possibleTypes`` from a schema, given as SDL text or as an introspection result (the JSON of
    /// `{ __schema { types { kind name possibleTypes { name } } } }`, with or without its `data` wrapper):
    /// every interface and union gets the object types a fragment on it applies to.
    ///
    /// ```swift
    /// var configuration = GQLCache.Configuration()
    /// try configuration.readSchema(String(contentsOfFile: "schema.graphql", encoding: .utf8))
    /// let cache = try GQLCache(path: "cache.sqlite", configuration: configuration)
    /// ```
    /// Entries the schema has replace those of ``possibleTypes`` with the same name; others are kept.
    /// - Throws: ``GQLError`` `.invalidArgument` for text that is neither SDL that parses nor introspection JSON.
    public mutating func readSchema(_ text: String) throws {
        possibleTypes.merge(try Self.possibleTypes(inSchema: text)) { _, read in read }
    }

    /// The concrete types of each interface and union of a schema (SDL or introspection JSON); see
    /// ``readSchema(_:)``.
    ///
    /// ```swift
    /// let types = try GQLCache.Configuration.possibleTypes(inSchema: "interface Node { id: ID! } …")
    /// ```
    public static func possibleTypes(inSchema text: String) throws -> [String: Set<String>] {
        let trimmed = text.drop { $0.isWhitespace }
        if trimmed.first == "{" || trimmed.first == "[" {
            guard let json = try? GQLValue(json: String(trimmed)) else {
                throw GQLError(.invalidArgument, "the schema text starts like JSON but does not parse as JSON")
            }
            return try fromIntrospection(json)
        }
        return try fromSDL(text)
    }

    /// The possible types an introspection result lists.
    private static func fromIntrospection(_ json: GQLValue) throws -> [String: Set<String>] {
        guard case .array(let types)? = (json["data"] ?? json)["__schema"]?["types"] else {
            throw GQLError(.invalidArgument, "the introspection JSON has no __schema.types list")
        }
        var possible: [String: Set<String>] = [:]
        for type in types {
            guard let kind = type["kind"]?.stringValue, kind == "INTERFACE" || kind == "UNION",
                let name = type["name"]?.stringValue
            else { continue }
            let members = type["possibleTypes"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            possible[name] = Set(members)
        }
        return possible
    }

    /// The possible types an SDL document declares: union members, and the object types implementing each
    /// interface (also through an interface that implements it), type extensions included.
    private static func fromSDL(_ text: String) throws -> [String: Set<String>] {
        let document: Document
        do {
            document = try GraphQL.parse(source: GraphQL.Source(body: text, name: "schema"))
        } catch let error as GraphQLError {
            let reason = error.message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? error.message
            throw GQLError(.invalidArgument, "the schema does not parse: \(reason)")
        }
        var unions: [String: Set<String>] = [:]
        var interfaces: Set<String> = []
        // Each type (object or interface) → the interfaces it declares.
        var implements: [String: Set<String>] = [:]
        var objects: Set<String> = []
        func object(_ definition: ObjectTypeDefinition) {
            objects.insert(definition.name.value)
            implements[definition.name.value, default: []].formUnion(definition.interfaces.map(\.name.value))
        }
        func interface(_ definition: InterfaceTypeDefinition) {
            interfaces.insert(definition.name.value)
            implements[definition.name.value, default: []].formUnion(definition.interfaces.map(\.name.value))
        }
        for definition in document.definitions {
            switch definition {
            case let definition as ObjectTypeDefinition: object(definition)
            case let definition as TypeExtensionDefinition: object(definition.definition)
            case let definition as InterfaceTypeDefinition: interface(definition)
            case let definition as InterfaceExtensionDefinition: interface(definition.definition)
            case let definition as UnionTypeDefinition:
                unions[definition.name.value, default: []].formUnion(definition.types.map(\.name.value))
            case let definition as UnionExtensionDefinition:
                unions[definition.definition.name.value, default: []].formUnion(
                    definition.definition.types.map(\.name.value))
            default: continue
            }
        }
        var possible = unions
        for name in interfaces { possible[name] = [] }
        for type in objects {
            // Every interface reachable from the object's own, once each (a cycle cannot loop).
            var seen: Set<String> = []
            var queue = Array(implements[type] ?? [])
            while let next = queue.popLast() {
                guard seen.insert(next).inserted else { continue }
                queue.append(contentsOf: implements[next] ?? [])
            }
            for name in seen where interfaces.contains(name) { possible[name, default: []].insert(type) }
        }
        return possible
    }
}
