import AsyncHTTPClient
import GQLCore

/// An AsyncHTTPClient that one toolkit object owns: shut down once, by ``shutdown()`` or, when its owner is dropped
/// without calling it, when the last reference goes (AsyncHTTPClient requires every client it makes to be shut down).
///
/// ```swift
/// let owned = HTTPExchange.makeClient(timeout: .seconds(30))
/// let exchange = HTTPExchange(client: owned, limits: limits)
/// try await owned.shutdown()          // again: nothing happens
/// ```
///
/// A client made with ``HTTPExchange/makeClient(timeout:connectTimeout:decompression:sharing:)`` from an app's own
/// client is still the toolkit's own: shutting it down leaves the app's client alone.
package final class OwnedHTTPClient: Sendable {
    /// The client requests go through.
    package let client: HTTPClient
    private let isShutDown = GQLLocked(false)

    package init(_ client: HTTPClient) {
        self.client = client
    }

    deinit {
        if !isShutDown.withLock({ $0 }) { client.shutdown { _ in } }
    }

    /// Releases the client's connections; requests made afterwards fail with `GQLError.Code.closed`. Calling it
    /// again does nothing.
    package func shutdown() async throws {
        let already = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        if !already { try await client.shutdown() }
    }
}
