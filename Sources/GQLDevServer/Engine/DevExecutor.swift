import GQLStore

/// What the transports need from a GraphQL engine: preparing a request (parse, limits, validation, the operation
/// it selects), running a query or mutation, and starting a subscription.
///
/// ``DevEngine`` is the implementation the server uses. The protocol keeps the transports independent of how
/// the schema and resolvers are built, and lets tests wrap the real engine (e.g. to hold a request in flight).
package protocol DevExecutor: Sendable {
    /// The database the models are stored in.
    var database: GQLDatabase { get }
    /// The generated schema as SDL.
    var schemaSDL: String { get }
    /// What one request may ask.
    var limits: GQLDevServer.Limits { get }
    /// The request checked and ready to run, or why it cannot run (nothing was executed).
    func prepare(_ request: DevEngine.Request) -> Result<DevEngine.Prepared, DevEngine.Refusal>
    /// Runs a query or mutation; failures are `errors` in the `{"data","errors"}` response.
    func execute(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle, budget: ResponseBudget) async
        -> DevEngine.Response
    /// Starts a subscription: a stream of responses, or one response that ends it at once.
    func subscribe(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle) async -> DevEngine.Subscription
}

extension DevEngine: DevExecutor {}

extension GQLValue {
    /// The `errors` array of a `{"data","errors"}` response, or one error saying the response had none.
    var responseErrors: GQLValue {
        if case .array(let list)? = self["errors"], !list.isEmpty { return .array(list) }
        return [["message": "The operation failed without an error message."]]
    }
}
