import AsyncHTTPClient
import Foundation
import GQLCore
import NIOCore
import NIOHTTP1

extension HTTPExchange {
    /// The AsyncHTTPClient settings every exchange runs with, over `base`: redirects not followed (the exchange
    /// refuses them), `timeout` as the read timeout (the longest a body may stall), a refused connection failed
    /// at once rather than retried until the connect timeout.
    package static func clientConfiguration(
        _ base: HTTPClient.Configuration = .init(), timeout: Duration, connectTimeout: Duration? = nil,
        decompression: HTTPClient.Decompression = .disabled
    ) -> HTTPClient.Configuration {
        var configuration = base
        configuration.redirectConfiguration = .disallow
        configuration.timeout.read = .nanoseconds(timeout.nanoseconds)
        if let connectTimeout { configuration.timeout.connect = .nanoseconds(connectTimeout.nanoseconds) }
        configuration.decompression = decompression
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// A client with ``clientConfiguration(_:timeout:connectTimeout:decompression:)``, owned (and shut down) by the
    /// caller through the ``OwnedHTTPClient`` it comes in.
    ///
    /// With `shared`, an app's own client, the new client runs on its event loops with its settings (TLS, proxy,
    /// pool), only redirects turned off and the timeout set: AsyncHTTPClient decides about redirects per client,
    /// and an app's client that follows them would send the toolkit's credentials (API keys, signatures, form
    /// bodies) to whatever origin a server names, before the toolkit sees the answer.
    package static func makeClient(
        timeout: Duration, connectTimeout: Duration? = nil, decompression: HTTPClient.Decompression = .disabled,
        sharing shared: HTTPClient? = nil
    ) -> OwnedHTTPClient {
        guard let shared else {
            return OwnedHTTPClient(
                HTTPClient(
                    eventLoopGroupProvider: .singleton,
                    configuration: clientConfiguration(
                        timeout: timeout, connectTimeout: connectTimeout, decompression: decompression)))
        }
        // AsyncHTTPClient keeps a client's configuration internal; reflection reads it so the app's TLS, proxy and
        // pool settings carry over. Were it ever unreadable, the defaults are used: still on the app's event loops,
        // still without redirects.
        let base = Mirror(reflecting: shared).descendant("configuration") as? HTTPClient.Configuration ?? .init()
        return OwnedHTTPClient(
            HTTPClient(
                eventLoopGroup: shared.eventLoopGroup,
                configuration: clientConfiguration(
                    base, timeout: timeout, connectTimeout: connectTimeout, decompression: decompression)))
    }

    /// The refusal of an answer that redirects: a 3xx with a `Location` (the client did not follow it), or an
    /// answer the client reached by following one (a client not made by ``makeClient(timeout:connectTimeout:decompression:sharing:)``).
    static func redirectRefusal(
        _ response: HTTPClientResponse, request: HTTPClientRequest, target: String, operation: String
    ) -> GQLError? {
        let first = response.history.first
        let status = Int(first?.responseHead.status.code ?? response.status.code)
        let headers = first?.responseHead.headers ?? response.headers
        guard (300..<400).contains(status), let location = headers.first(name: "Location") else { return nil }
        let resolved = URL(string: location, relativeTo: URL(string: request.url))
        let named = resolved.map { loggable($0.absoluteString) } ?? "an unparsable URL"
        return GQLError(
            .redirect,
            "\(target) answered HTTP \(status), a redirect to \(named), which is not followed: redirects are refused "
                + "so the request's credentials never reach another origin (use the URL it names, if it is right)",
            operation: operation, httpStatus: status)
    }
}
