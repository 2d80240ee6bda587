import GQLCore
import ServiceLifecycle

/// The open WebSockets of a server, so a graceful shutdown can close each with 1001 "going away".
///
/// Hummingbird's own shutdown closes sockets with 1000; ``WebSocketCloser`` runs after the application in
/// the server's service group, so it is shut down first and reaches every socket before Hummingbird does.
final class WebSocketRegistry: Sendable {
    private struct State {
        var sockets: [Int: SocketWriter] = [:]
        var nextID = 0
        var isClosing = false
    }

    private let state = GQLLocked(State())

    /// Adds a socket; `nil` when the server is shutting down (the caller closes the socket at once).
    func register(_ writer: SocketWriter) -> Int? {
        state.withLock { state in
            guard !state.isClosing else { return nil }
            state.nextID += 1
            state.sockets[state.nextID] = writer
            return state.nextID
        }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.sockets.removeValue(forKey: id) }
    }

    /// The number of open sockets.
    var count: Int { state.withLock { $0.sockets.count } }

    /// Refuses new sockets and closes every open one with 1001.
    func closeAll() async {
        let sockets = state.withLock { state in
            state.isClosing = true
            return Array(state.sockets.values)
        }
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask { await socket.close(code: 1001, reason: "Server shutting down") }
            }
        }
    }
}

/// A service that waits for graceful shutdown, then closes every registered WebSocket with 1001.
struct WebSocketCloser: Service {
    let registry: WebSocketRegistry

    func run() async throws {
        try? await gracefulShutdown()
        await registry.closeAll()
    }
}
