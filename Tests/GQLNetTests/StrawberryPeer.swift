import Foundation
import GQLTestSupport

/// A Strawberry GraphQL server (Tests/Interop/strawberry_peer.py), or another Python peer that prints
/// `READY http://127.0.0.1:PORT/graphql`, run for one test through the shared ``PythonPeer``.
final class StrawberryPeer {
    /// `http://127.0.0.1:PORT/graphql`.
    let http: String
    /// `ws://127.0.0.1:PORT/graphql`.
    let webSocket: String
    private let peer: PythonPeer

    /// Starts the peer and waits (at most `timeout`) for it to listen.
    ///
    /// - Parameter script: the peer under Tests/Interop; websocket_peer.py is the plain WebSocket server of the
    ///   transport tests.
    static func start(
        _ arguments: [String] = [], script: String = "strawberry_peer.py", timeout: Duration = .seconds(60)
    ) async throws -> StrawberryPeer {
        StrawberryPeer(try await PythonPeer.start(script, arguments, timeout: timeout))
    }

    private init(_ peer: PythonPeer) {
        self.peer = peer
        self.http = peer.ready
        self.webSocket = peer.ready.replacingOccurrences(of: "http://", with: "ws://")
    }

    /// What the peer wrote on standard error so far (uvicorn warnings, Python tracebacks).
    var stderr: String { peer.stderr }

    /// Closes the peer's standard input (it then shuts down), waits for it to end, and kills it after `timeout`.
    func stop(timeout: Duration = .seconds(10)) async { await peer.stop(timeout: timeout) }
}

/// Runs `body` with a Strawberry peer started for it, then stops the peer, also when `body` throws.
func withStrawberryPeer<T>(_ arguments: [String] = [], _ body: (StrawberryPeer) async throws -> T) async throws -> T {
    let peer = try await StrawberryPeer.start(arguments)
    do {
        let result = try await body(peer)
        await peer.stop()
        return result
    } catch {
        await peer.stop()
        throw error
    }
}
