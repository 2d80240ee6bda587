import GQLCore
import HummingbirdWebSocket

/// One socket speaking `graphql-transport-ws` (the graphql-ws library's protocol, `PROTOCOL.md`); the rules
/// are ``TransportWSStateMachine``'s, this type does the I/O and runs the operations.
///
/// `connection_init` → `connection_ack` (credentials from the upgrade headers or the init payload, else close
/// 4403, or 4401 where tokens are checked; a `subscribe` after the token expired also closes 4401); `ping` → `pong`; `subscribe` runs any operation kind and answers `next`… then `complete`, or
/// `error` for a request that fails before execution; a client `complete` stops an operation.
/// Protocol faults close the socket: 4400 invalid message, 4401 subscribe before the ack, 4408 no init within
/// ``GQLDevServer/Configuration/connectionInitTimeout``, 4409 duplicate id, 4429 a second init.
struct TransportWSSession {
    let transport: WebSocketTransport
    let writer: SocketWriter
    let handshake: DevAuthenticator.Credentials
    let operations: OperationRegistry

    func run(_ messages: WebSocketInboundMessageStream) async throws {
        var machine = TransportWSStateMachine(authenticator: transport.authenticator, handshake: handshake)
        let initTimeout = transport.configuration.connectionInitTimeout
        let writer = self.writer
        // The timer fires at most once and is cancelled at the ack, so the machine's verdict is known up front.
        let onTimeout = machine.initTimeoutElapsed()
        let timer = Task {
            try await Task.sleep(for: initTimeout)
            if case .close(let code, let reason) = onTimeout { await writer.close(code: code, reason: reason) }
        }
        defer {
            timer.cancel()
            operations.stopAll()
        }
        for try await message in messages {
            await transport.faults.delay()
            var action = machine.receive(WebSocketTransport.decode(message))
            if machine.isAcknowledged { timer.cancel() }
            if case .run(let id, let request) = action {
                switch await start(request, id: id) {
                case .duplicate: action = TransportWSStateMachine.duplicate(id)
                case .full: action = .send(SessionWire.transportWS.full(id, limit: operations.limit))
                case .started, .closed: break
                }
            }
            switch action {
            case .send(let reply):
                await writer.send(reply)
            case .close(let code, let reason):
                await writer.close(code: code, reason: reason)
                return
            case .stop(let id):
                operations.stop(id)
            case .run, .none:
                break
            }
            if await writer.isClosed { return }
        }
    }

    /// Prepares and starts the operation (a refusal is reported by the operation's task).
    private func start(_ request: DevEngine.Request, id: String) async -> OperationRegistry.StartResult {
        await transport.start(
            transport.prepare(request, id: id), id: id, wire: .transportWS, operations: operations, writer: writer)
    }

}
