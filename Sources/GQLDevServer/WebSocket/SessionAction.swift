import GQLCore
import HummingbirdWebSocket

/// What a legacy graphql-ws or AppSync session does with one inbound message, as its state machine decides
/// (``LegacyWSStateMachine``, ``AppSyncStateMachine``).
enum SessionAction: Equatable {
    /// Send this message.
    case send(GQLValue)
    /// Send the protocol's `connection_ack` and start the keep-alive messages.
    case acknowledge
    /// Send this message (when there is one), close the socket with this code and reason, and stop reading.
    case close(GQLValue?, code: Int, reason: String)
    /// Run the operation `request` under `id`.
    case run(id: String, request: DevEngine.Request)
    /// Stop the operation `id` (and answer `complete` as the protocol says).
    case stop(id: String)
    /// Nothing to do.
    case none
}

extension WebSocketTransport {
    /// Reads a legacy graphql-ws or AppSync session's messages and carries out the action `decide` makes of each.
    ///
    /// - Parameters:
    ///   - acknowledgement: the protocol's `connection_ack` message.
    ///   - completesUnknownStops: whether a `stop` for an id that is not running still gets `complete` (AppSync).
    ///   - start: runs an operation the machine accepted.
    func carryOut(
        _ messages: WebSocketInboundMessageStream, writer: SocketWriter, operations: OperationRegistry,
        acknowledgement: GQLValue, completesUnknownStops: Bool,
        decide: (_ message: (type: String, object: GQLValues)?) -> SessionAction,
        start: (_ id: String, _ request: DevEngine.Request) async -> Void
    ) async throws {
        try await readMessages(messages, writer: writer, operations: operations) { message, keepAlive in
            switch decide(message) {
            case .send(let reply):
                await writer.send(reply)
            case .acknowledge:
                await writer.send(acknowledgement)
                keepAlive = writer.keepAlive(every: configuration.keepAliveInterval)
            case .close(let reply, let code, let reason):
                if let reply { await writer.send(reply) }
                await writer.close(code: code, reason: reason)
                return false
            case .run(let id, let request):
                await start(id, request)
            case .stop(let id):
                if operations.stop(id) || completesUnknownStops {
                    await writer.send(SessionWire.complete(id))
                }
            case .none:
                break
            }
            return true
        }
    }
}
