import GraphQL

/// Makes `__InputValue.isDeprecated` and `deprecationReason` introspect as the spec says.
///
/// GraphQLSwift 4.3.0 declares both fields on `__InputValue` without resolvers, so the default resolver finds no
/// such property on an argument or input field and answers `null` — for `isDeprecated`, a non-null field, which
/// fails the whole introspection query that graphql-core's `get_introspection_query(input_value_deprecation=True)`
/// sends (the Python gql client's `fetch_schema_from_transport`). `__InputValue` is one object shared by every
/// schema of the process, so the resolvers are installed on it once, by the first engine, before any engine runs
/// a query: the installation is a `static let`, whose one-time initialisation every later reader is ordered
/// after (a lock around the installation alone would still race with queries of engines on other threads).
enum IntrospectionFix {
    private static let installed: Bool = {
        guard let query = try? GraphQLObjectType(name: "Query", fields: ["ok": GraphQLField(type: GraphQLBoolean)]),
            let schema = try? GraphQLSchema(query: query),
            let type = schema.getType(name: "__InputValue") as? GraphQLObjectType
        else { return false }
        let original = type.fields
        type.fields = {
            let fields = try original()
            if let field = fields["isDeprecated"] { field.resolve = { source, _, _, _ in reason(source) != nil } }
            if let field = fields["deprecationReason"] { field.resolve = { source, _, _, _ in reason(source) } }
            return fields
        }
        return true
    }()

    /// Installs the resolvers on the process's `__InputValue` type, once; call before the engine runs queries.
    static func install() {
        _ = installed
    }

    private static func reason(_ source: any Sendable) -> String? {
        if let argument = source as? GraphQLArgumentDefinition { return argument.deprecationReason }
        if let field = source as? InputObjectFieldDefinition { return field.deprecationReason }
        return nil
    }
}
