import GQLStore

/// What the transports need from a GraphQL engine: the kind of a request's operation, running a query or
/// mutation, and starting a subscription.
///
/// ``DevEngine`` is the implementation the server uses. The protocol keeps the transports independent of how
/// the schema and resolvers are built, and lets tests wrap the real engine (e.g. to hold a request in flight).
package protocol DevExecutor: Sendable {
    /// The database the models are stored in.
    var database: GQLDatabase { get }
    /// The generated schema as SDL.
    var schemaSDL: String { get }
    /// The kind of the operation `request` selects; throws for a document that does not parse.
    func operationKind(_ request: DevEngine.Request) throws -> DevEngine.OperationKind
    /// Runs a query or mutation; failures are `errors` in the `{"data","errors"}` response.
    func execute(_ request: DevEngine.Request, style: DevEngine.ErrorStyle) async -> GQLValue
    /// Starts a subscription: a stream of responses, or one response that ends it at once.
    func subscribe(_ request: DevEngine.Request, style: DevEngine.ErrorStyle) async -> DevEngine.Subscription
}

extension DevEngine: DevExecutor {}

extension GQLValue {
    /// The `errors` array of a `{"data","errors"}` response, or one error saying the response had none.
    var responseErrors: GQLValue {
        if case .array(let list)? = self["errors"], !list.isEmpty { return .array(list) }
        return [["message": "The operation failed without an error message."]]
    }
}
