import GraphQL

/// Builds each input object type's fields once.
///
/// In a schema that GraphQLSwift 4.3.0 builds from SDL, every input object type's `fields` is a closure that
/// rebuilds the field map from the SDL's syntax tree each time it is called, and the executor calls it for every
/// input object it validates or coerces. Once the schema is complete, the map is built once and the closure
/// returns it.
enum InputFieldCache {
    /// Replaces the `fields` closure of every input object type of `schema` with one returning the map built now.
    static func install(in schema: GraphQLSchema) throws {
        for case let type as GraphQLInputObjectType in schema.typeMap.values {
            let fields = try type.fields()
            type.fields = { fields }
        }
    }
}
