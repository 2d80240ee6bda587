import GQLCore
import HummingbirdWebSocket

/// One socket speaking Apollo's legacy `graphql-ws` protocol (subscriptions-transport-ws).
///
/// `connection_init` → `connection_ack`, then `ka` at once and every
/// ``GQLDevServer/Configuration/keepAliveInterval``; bad credentials → `connection_error` and close 4403 (4401
/// where tokens are checked; a `start` after the connection's token expired also closes 4401).
/// `start` runs any operation kind: `data` for each result, `complete` when a query, mutation or finite
/// subscription is done; `error` for a request that fails before execution. `stop` → `complete`;
/// `connection_terminate` closes the socket. An unreadable message gets `connection_error`, an unknown type
/// an `error`; the socket stays open for both, as in the reference server. The rules are
/// ``LegacyWSStateMachine``'s; this type carries out its actions.
struct LegacyWSSession {
    let transport: WebSocketTransport
    let writer: SocketWriter
    let handshake: DevAuthenticator.Credentials
    let operations: OperationRegistry

    func run(_ messages: WebSocketInboundMessageStream) async throws {
        var machine = LegacyWSStateMachine(authenticator: transport.authenticator, handshake: handshake)
        try await transport.carryOut(
            messages, writer: writer, operations: operations, acknowledgement: ["type": "connection_ack"],
            completesUnknownStops: false, decide: { machine.receive($0) }, start: start)
    }

    private func start(id: String, request: DevEngine.Request) async {
        let outcome = transport.prepare(request, id: id)
        switch await transport.start(outcome, id: id, wire: .legacy, operations: operations, writer: writer) {
        case .duplicate:
            await writer.send(LegacyWSStateMachine.error(id, "Subscriber for \(id) already exists"))
        case .full:
            await writer.send(SessionWire.legacy.full(id, limit: operations.limit))
        case .started, .closed:
            break
        }
    }
}
