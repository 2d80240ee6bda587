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
/// subscriptions only: queries and mutations get `UnsupportedOperation`.
struct AppSyncSession {
    let transport: WebSocketTransport
    let writer: SocketWriter
    let handshake: DevAuthenticator.Credentials
    let operations: OperationRegistry

    func run(_ messages: WebSocketInboundMessageStream) async throws {
        var acknowledged = false
        try await transport.readMessages(messages, writer: writer, operations: operations) { message, keepAlive in
            guard let (type, object) = message else {
                await writer.send(Self.error(nil, "BadRequestException", "Message must be JSON with a type."))
                return true
            }
            let id = object["id"]?.stringValue
            switch type {
            case "connection_init":
                guard transport.authenticator.authorizes(handshake) else {
                    let error: GQLValue = [
                        "errorType": "UnauthorizedException", "message": "You are not authorized to make this call.",
                        "errorCode": 401,
                    ]
                    await writer.send(["type": "connection_error", "payload": ["errors": [error]]])
                    await writer.close(code: 4403, reason: "Forbidden")
                    return false
                }
                guard !acknowledged else { return true }
                acknowledged = true
                let timeout = GQLValue.int(Int64(transport.configuration.appSyncConnectionTimeoutMilliseconds))
                await writer.send(["type": "connection_ack", "payload": ["connectionTimeoutMs": timeout]])
                keepAlive = writer.keepAlive(every: transport.configuration.keepAliveInterval)
            case "start":
                guard let id else {
                    await writer.send(Self.error(nil, "BadRequestException", "start needs an id"))
                    return true
                }
                await start(id: id, payload: object["payload"])
            case "stop":
                guard let id else { return true }
                operations.stop(id)
                await writer.send(["type": "complete", "id": .string(id)])
            default:
                await writer.send(Self.error(id, "UnsupportedOperation", "Unknown message type \(type)"))
            }
            return true
        }
    }

    private func start(id: String, payload: GQLValue?) async {
        guard let data = payload?["data"]?.stringValue, let decoded = try? GQLValue(json: data) else {
            await writer.send(Self.error(id, "BadRequestException", "payload.data must be a JSON string"))
            return
        }
        let request: DevEngine.Request
        switch WebSocketTransport.graphQLRequest(decoded) {
        case .success(let value): request = value
        case .failure(let failure):
            await writer.send(Self.error(id, "BadRequestException", failure.message))
            return
        }
        let offered = DevAuthenticator.Credentials(json: payload?["extensions"]?["authorization"])
        guard transport.authenticator.authorizes(offered.isEmpty ? handshake : offered) else {
            await writer.send(Self.error(id, "UnauthorizedException", "Permission denied"))
            return
        }
        let engine = transport.engine
        let outcome = transport.prepare(request, id: id)
        let kind: DevEngine.OperationKind?
        switch outcome {
        case .success(let prepared): kind = prepared.kind
        case .failure(let refusal): kind = refusal.reason == .limit ? nil : refusal.kind
        }
        if let kind, kind != .subscription {
            let name = kind == .query ? "query" : "mutation"
            await writer.send(
                Self.error(id, "UnsupportedOperation", "\(name) not supported through the realtime channel"))
            return
        }
        let writer = self.writer
        switch operations.start(id, { await SessionWire.appSync.perform(outcome, id: id, engine: engine, writer: writer) }) {
        case .duplicate:
            await writer.send(Self.error(id, "BadRequestException", "Subscription \(id) already exists"))
        case .full:
            await writer.send(SessionWire.appSync.full(id, limit: operations.limit))
        case .started, .closed:
            break
        }
    }

    /// An AppSync error message, for the operation `id` when there is one.
    static func error(_ id: String?, _ errorType: String, _ message: String) -> GQLValue {
        var reply: GQLValues = [
            "type": "error",
            "payload": ["errors": [["errorType": .string(errorType), "message": .string(message)]]],
        ]
        if let id { reply["id"] = .string(id) }
        return .object(reply)
    }
}
