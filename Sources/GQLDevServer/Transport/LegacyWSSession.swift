import Foundation
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
/// an `error`; the socket stays open for both, as in the reference server.
struct LegacyWSSession {
    let transport: WebSocketTransport
    let writer: SocketWriter
    let handshake: DevAuthenticator.Credentials
    let operations: OperationRegistry

    func run(_ messages: WebSocketInboundMessageStream) async throws {
        var acknowledged = false
        var authorizedUntil: Date?
        try await transport.readMessages(messages, writer: writer, operations: operations) { message, keepAlive in
            guard let (type, object) = message else {
                await writer.send([
                    "type": "connection_error", "payload": ["message": "Message must be JSON with a type."],
                ])
                return true
            }
            let id = object["id"]?.stringValue
            switch type {
            case "connection_init":
                let credentials = DevAuthenticator.Credentials(json: object["payload"]).merging(handshake)
                let authenticator = transport.authenticator
                switch authenticator.check(credentials) {
                case .failure(let refusal):
                    let code = authenticator.refusalCloseCode
                    let message = code == 4401 ? "Unauthorized: \(refusal.reason)" : "Forbidden: invalid credentials"
                    await writer.send(["type": "connection_error", "payload": ["message": .string(message)]])
                    await writer.close(
                        code: code,
                        reason: code == 4401 ? TransportWSStateMachine.closeReason(refusal) : "Forbidden")
                    return false
                case .success(let until):
                    guard !acknowledged else { return true }
                    acknowledged = true
                    authorizedUntil = until
                }
                await writer.send(["type": "connection_ack"])
                keepAlive = writer.keepAlive(every: transport.configuration.keepAliveInterval)
            case "start":
                guard let id else {
                    await writer.send(["type": "error", "payload": ["message": "start needs an id"]])
                    return true
                }
                guard !transport.authenticator.hasExpired(authorizedUntil) else {
                    await writer.close(code: 4401, reason: "Unauthorized: the token expired")
                    return false
                }
                await start(id: id, object: object, acknowledged: acknowledged)
            case "stop":
                guard let id else { return true }
                if operations.stop(id) { await writer.send(["type": "complete", "id": .string(id)]) }
            case "connection_terminate":
                await writer.close(code: 1000, reason: "Connection terminated")
                return false
            default:
                var reply: GQLValues = [
                    "type": "error", "payload": ["message": .string("Invalid message type \(type)")],
                ]
                if let id { reply["id"] = .string(id) }
                await writer.send(.object(reply))
            }
            return true
        }
    }

    private func start(id: String, object: GQLValues, acknowledged: Bool) async {
        let writer = self.writer
        guard acknowledged else {
            await writer.send(Self.error(id, "Send connection_init before start."))
            return
        }
        let request: DevEngine.Request
        switch WebSocketTransport.graphQLRequest(object["payload"]) {
        case .success(let decoded): request = decoded
        case .failure(let failure):
            await writer.send(Self.error(id, failure.message))
            return
        }
        let engine = transport.engine
        let outcome = transport.prepare(request, id: id)
        switch operations.start(
            id, { await SessionWire.legacy.perform(outcome, id: id, engine: engine, writer: writer) })
        {
        case .duplicate:
            await writer.send(Self.error(id, "Subscriber for \(id) already exists"))
        case .full:
            await writer.send(SessionWire.legacy.full(id, limit: operations.limit))
        case .started, .closed:
            break
        }
    }

    private static func error(_ id: String, _ message: String) -> GQLValue {
        ["type": "error", "id": .string(id), "payload": ["message": .string(message)]]
    }

}
