import GQLCore
import GraphQL

/// A failure inside a resolver, in AppSync's terms: an `errorType`, a message, and for conflicts the current
/// item as `data`. Resolvers turn it into a `GraphQLError` with the field's path and location, its
/// `errorType`/`data`/`errorInfo` in `extensions`; the response formatter hoists them for ``DevEngine/ErrorStyle/appSync``.
struct ResolverError: Error, Sendable {
    var errorType: String
    var message: String
    var data: GQLValue?

    init(_ errorType: String, _ message: String, data: GQLValue? = nil) {
        self.errorType = errorType
        self.message = message
        self.data = data
    }

    /// A stale `_version` or a write to a deleted item.
    static func conflict(current: GQLValues) -> ResolverError {
        ResolverError("ConflictUnhandled", "Conflict resolver rejects mutation.", data: .object(current))
    }

    /// A failed `condition`, a duplicate key on create, or a missing item on update/delete.
    static func conditionFailed(_ detail: String) -> ResolverError {
        ResolverError("DynamoDB:ConditionalCheckFailedException", "The conditional request failed: \(detail)")
    }

    /// An argument the resolver cannot use (bad filter, limit, token, value).
    static func badRequest(_ message: String) -> ResolverError {
        ResolverError("BadRequest", message)
    }

    /// The error GraphQLSwift reports: with the field's location and path, so the response says where.
    func graphQLError(nodes: [Node], path: IndexPath) -> GraphQLError {
        var extensions: [String: Map] = ["errorType": .string(errorType), "errorInfo": .null]
        extensions["data"] = data.map(MapConversion.map) ?? .null
        return GraphQLError(message: message, nodes: nodes, path: path, extensions: extensions)
    }

    /// Runs a resolver body, turning every failure into a located `GraphQLError`.
    static func guarding<T>(_ info: GraphQLResolveInfo, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw located(error, nodes: info.fieldASTs, path: info.path)
        }
    }

    /// A resolver's failure as the `GraphQLError` reported for the field at `nodes` and `path`.
    static func located(_ error: any Error, nodes: [Node], path: IndexPath) -> GraphQLError {
        switch error {
        case let error as ResolverError: error.graphQLError(nodes: nodes, path: path)
        case let error as GQLError: ResolverError("DatabaseError", error.message).graphQLError(nodes: nodes, path: path)
        case let error as LimitExceeded: error.graphQLError(nodes: nodes, path: path)
        case let error as GraphQLError: error
        default: ResolverError("InternalFailure", String(describing: error)).graphQLError(nodes: nodes, path: path)
        }
    }
}
