import GQLCore
import GQLNet

extension GQLCache {
    /// A generated query's answer (`gql-cli codegen`), decoded, with where it came from.
    public struct TypedResult<Data: GQLSelectionSet>: Sendable, Hashable {
        /// The answer's data, decoded.
        public var data: Data
        /// The cache or the network.
        public var source: Source
        /// Whether the answer holds a field past its age (see ``GQLCache/fetch(_:_:_:policy:store:maxStale:)``).
        public var isStale: Bool
    }

    /// Answers a generated query from the cache, the network or both, by `policy`, as
    /// ``fetch(_:_:_:policy:store:maxStale:)`` does with its text and variables, and decodes the answer.
    ///
    /// ```swift
    /// let cached = try await cache.fetch(server, GetUserQuery(id: "1"), policy: .cacheFirst)
    /// print(cached.data.user?.name ?? "", cached.source)
    /// ```
    /// - Throws: the errors of ``fetch(_:_:_:policy:store:maxStale:)``; ``GQLResult/Failure`` when the answer
    ///   has errors; ``GQLError`` `.decoding` when it does not fit the generated type.
    public func fetch<Query: GQLTypedQuery>(
        _ server: GQLServer, _ query: Query, policy: Policy = .cacheFirst, store: Bool = true,
        maxStale: Duration = .zero
    ) async throws -> TypedResult<Query.Data> {
        let variables = query.variables.gqlValue.objectValue?.dictionary ?? [:]
        let answer = try await fetch(
            server, Query.document, variables, policy: policy, store: store, maxStale: maxStale)
        return TypedResult(
            data: try GQLServer.decodeData(Query.Data.self, from: answer.result), source: answer.source,
            isStale: answer.isStale)
    }
}
