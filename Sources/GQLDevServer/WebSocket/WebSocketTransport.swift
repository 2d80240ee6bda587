import GQLCore
import Hummingbird
import HummingbirdWebSocket
import Logging

/// Serves GraphQL over WebSocket: picks the protocol from the upgrade request, then hands the socket to the
/// session type that speaks it.
struct WebSocketTransport: Sendable {
    let engine: any DevExecutor
    let authenticator: DevAuthenticator
    let faults: FaultInjector
    let configuration: GQLDevServer.Configuration
    let registry: WebSocketRegistry
    let logger: Logger

    /// The largest inbound message accepted; the WebSocket frame limit is raised to match.
    static let maxMessageBytes = 1 << 20

    /// The headers of the 101 response: the chosen subprotocol, if any. Every upgrade is accepted so that an
    /// unknown subprotocol can be refused with close code 4406 rather than an opaque HTTP 400.
    func upgradeHeaders(for request: Request) -> HTTPFields {
        guard let subprotocol = WebSocketFlavor(request: request).subprotocol else { return [:] }
        return [.secWebSocketProtocol: subprotocol]
    }

    /// Runs one socket until it closes.
    func serve(
        _ inbound: WebSocketInboundStream,
        _ outbound: WebSocketOutboundWriter,
        request: Request
    ) async throws {
        let writer = SocketWriter(outbound, dropAfter: configuration.faults.dropWebSocketsAfter, logger: logger)
        guard let registration = registry.register(writer) else {
            await writer.close(code: 1001, reason: "Server shutting down")
            return
        }
        let flavor = WebSocketFlavor(request: request)
        logger.info("WebSocket opened (\(flavor.name))")
        defer {
            registry.remove(registration)
            logger.info("WebSocket closed (\(flavor.name))")
        }
        let handshake = DevAuthenticator.Credentials(headers: request.headers)
        let messages = inbound.messages(maxSize: Self.maxMessageBytes)
        let operations = OperationRegistry(limit: configuration.limits.maxSubscriptionsPerSocket)
        switch flavor {
        case .transportWS:
            try await TransportWSSession(transport: self, writer: writer, handshake: handshake, operations: operations)
                .run(messages)
        case .legacyWS:
            try await LegacyWSSession(transport: self, writer: writer, handshake: handshake, operations: operations)
                .run(messages)
        case .appSync(let header):
            let credentials = DevAuthenticator.Credentials(json: header).merging(handshake)
            try await AppSyncSession(transport: self, writer: writer, handshake: credentials, operations: operations)
                .run(messages)
        case .unsupported:
            // Closed at the client's first message (or after the init timeout) rather than at once: some
            // clients (WSClient among them) lose a frame that arrives in the same read as the 101 response.
            let timer = Task {
                try await Task.sleep(for: configuration.connectionInitTimeout)
                await writer.close(code: 4406, reason: "Subprotocol not acceptable")
            }
            defer { timer.cancel() }
            for try await _ in messages { await writer.close(code: 4406, reason: "Subprotocol not acceptable") }
        }
    }

    /// Starts operation `id` in `operations`, on `wire`, and returns once a subscription is registered with the
    /// engine (or was refused, or the operation is no subscription).
    ///
    /// The session reads the socket's next message only then: a client that has the answer to a query it sent
    /// after its subscribes knows that they are all live (GQLSync's live sync pulls only after such an answer).
    func start(
        _ outcome: Result<DevEngine.Prepared, DevEngine.Refusal>, id: String, wire: SessionWire,
        operations: OperationRegistry, writer: SocketWriter
    ) async -> OperationRegistry.StartResult {
        let engine = self.engine
        let gate = configuration.beforeSubscriptionStarts
        let registered = GQLWaiter<Void>()
        let result = operations.start(id) {
            await wire.perform(outcome, id: id, engine: engine, writer: writer, registered: registered, gate: gate)
        }
        if result == .started { await registered.wait(whenCancelled: ()) }
        return result
    }

    /// Prepares the operation a socket's client started as `id`, and logs it (its name, never its variables).
    func prepare(_ request: DevEngine.Request, id: String) -> Result<DevEngine.Prepared, DevEngine.Refusal> {
        let outcome = engine.prepare(request)
        logger.info("WebSocket operation \(id) \(request.operationName ?? "anonymous")\(Self.verdict(outcome))")
        return outcome
    }

    private static func verdict(_ outcome: Result<DevEngine.Prepared, DevEngine.Refusal>) -> String {
        switch outcome {
        case .success(let prepared): " (\(prepared.kind))"
        case .failure(let refusal): " refused (\(refusal.code ?? "\(refusal.reason)"))"
        }
    }

    /// The JSON object in a text message; `nil` for binary messages, bad JSON or a non-object.
    static func decode(_ message: WebSocketMessage) -> GQLValues? {
        guard case .text(let text) = message, let value = try? GQLValue(json: text) else { return nil }
        return value.objectValue
    }

    /// Reads a legacy or AppSync socket until it closes or `handle` returns `false`: each message after the fault
    /// delay, as its `type` and object (`nil` when it is not a JSON object with a string `type`). The keep-alive task
    /// `handle` may start and the session's operations stop when it returns.
    func readMessages(
        _ messages: WebSocketInboundMessageStream, writer: SocketWriter, operations: OperationRegistry,
        _ handle: (_ message: (type: String, object: GQLValues)?, _ keepAlive: inout Task<Void, Never>?) async -> Bool
    ) async throws {
        var keepAlive: Task<Void, Never>?
        defer {
            keepAlive?.cancel()
            operations.stopAll()
        }
        for try await message in messages {
            await faults.delay()
            let object = Self.decode(message)
            let decoded = object.flatMap { object in object["type"]?.stringValue.map { (type: $0, object: object) } }
            guard await handle(decoded, &keepAlive), await !writer.isClosed else { return }
        }
    }

    /// The GraphQL request in a `{query, variables, operationName}` object, or why it is not one.
    static func graphQLRequest(_ payload: GQLValue?) -> Result<DevEngine.Request, RequestError> {
        guard let object = payload?.objectValue else {
            return .failure(RequestError("The payload must be an object with a query."))
        }
        return HTTPRequestDecoder.request(from: object).mapError { RequestError($0.message) }
    }

    /// A message or payload that is not what the protocol expects.
    struct RequestError: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }
}
