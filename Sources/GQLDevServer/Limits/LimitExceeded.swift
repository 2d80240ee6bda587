import GraphQL

/// A request over one of the ``GQLDevServer/Limits``: refused before it runs (or, for the response size, as soon
/// as it reaches the limit), with a GraphQL error whose `extensions` carry the `code` and the `limit`.
///
/// ```swift
/// throw LimitExceeded(.depth, "The operation nests selections 40 deep; the limit is 32.", limit: 32)
/// // {"message": "…", "extensions": {"code": "DEPTH_LIMIT_EXCEEDED", "limit": 32}}
/// ```
struct LimitExceeded: Error, Sendable, Equatable {
    /// Which limit, as the `extensions.code` names it.
    struct Code: RawRepresentable, Hashable, Sendable {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }

        static let tokens = Code(rawValue: "TOKEN_LIMIT_EXCEEDED")
        static let depth = Code(rawValue: "DEPTH_LIMIT_EXCEEDED")
        static let valueDepth = Code(rawValue: "VALUE_DEPTH_LIMIT_EXCEEDED")
        static let selections = Code(rawValue: "SELECTION_LIMIT_EXCEEDED")
        static let aliases = Code(rawValue: "ALIAS_LIMIT_EXCEEDED")
        static let cost = Code(rawValue: "COST_LIMIT_EXCEEDED")
        static let responseSize = Code(rawValue: "RESPONSE_TOO_LARGE")
        static let batch = Code(rawValue: "BATCH_LIMIT_EXCEEDED")
        static let subscriptions = Code(rawValue: "SUBSCRIPTION_LIMIT_EXCEEDED")
        static let filter = Code(rawValue: "FILTER_LIMIT_EXCEEDED")
    }

    let code: Code
    let message: String
    let limit: Int

    init(_ code: Code, _ message: String, limit: Int) {
        self.code = code
        self.message = message
        self.limit = limit
    }

    /// The AppSync `errorType` of this refusal.
    var errorType: String {
        code == .subscriptions ? "MaxSubscriptionsReachedError" : "LimitExceededError"
    }

    /// The error as GraphQLSwift carries it, located at `nodes` when given.
    func graphQLError(nodes: [any Node] = [], path: IndexPath = []) -> GraphQLError {
        GraphQLError(
            message: message, nodes: nodes, path: path,
            extensions: [
                "code": .string(code.rawValue), "limit": .number(Number(limit)), "errorType": .string(errorType),
            ])
    }
}
