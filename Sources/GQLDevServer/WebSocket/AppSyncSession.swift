import GQLCore
import HummingbirdWebSocket

/// One socket speaking AWS AppSync's real-time protocol (subprotocol `graphql-ws`, credentials in the
/// `header` query parameter or a `header-<base64url>` subprotocol entry).
///
/// `connection_init` → `connection_ack` with `connectionTimeoutMs`, then `ka` at once and every
/// ``GQLDevServer/Configuration/keepAliveInterval``. `start` carries the request as a JSON *string* in
/// `payload.data` and its credentials in `payload.extensions.authorization` (the connection's are used when
/// it has none); it answers `start_ack`, then `data` per event. `stop` → `complete`. Errors use AppSync's
/// shape, `{"type":"error","id":…,"payload":{"errors":[{"errorType":…,"message":…}]}}`; bad connection
/// credentials get `connection_error` with `errorCode` 401 and close 4403. Like AppSync, the socket serves
/// subscriptions only: queries and mutations get `UnsupportedOperation`. The rules are ``AppSyncStateMachine``'s;
/// this type carries out its actions.
struct AppSyncSession {
    let transport: WebSocketTransport
    let writer: SocketWriter
    let handshake: DevAuthenticator.Credentials
    let operations: OperationRegistry

    func run(_ messages: WebSocketInboundMessageStream) async throws {
        var machine = AppSyncStateMachine(authenticator: transport.authenticator, handshake: handshake)
        let timeout = GQLValue.int(Int64(transport.configuration.appSyncConnectionTimeoutMilliseconds))
        try await transport.carryOut(
            messages, writer: writer, operations: operations,
            acknowledgement: ["type": "connection_ack", "payload": ["connectionTimeoutMs": timeout]],
            completesUnknownStops: true, decide: { machine.receive($0) }, start: start)
    }

    /// Runs a subscription; queries and mutations are refused, as AppSync's real-time endpoint does.
    private func start(id: String, request: DevEngine.Request) async {
        let outcome = transport.prepare(request, id: id)
        let kind: DevEngine.OperationKind?
        switch outcome {
        case .success(let prepared): kind = prepared.kind
        case .failure(let refusal): kind = refusal.reason == .limit ? nil : refusal.kind
        }
        if let kind, kind != .subscription {
            let name = kind == .query ? "query" : "mutation"
            let message = "\(name) not supported through the realtime channel"
            await writer.send(AppSyncStateMachine.error(id, "UnsupportedOperation", message))
            return
        }
        switch await transport.start(outcome, id: id, wire: .appSync, operations: operations, writer: writer) {
        case .duplicate:
            await writer.send(AppSyncStateMachine.error(id, "BadRequestException", "Subscription \(id) already exists"))
        case .full:
            await writer.send(SessionWire.appSync.full(id, limit: operations.limit))
        case .started, .closed:
            break
        }
    }
}
