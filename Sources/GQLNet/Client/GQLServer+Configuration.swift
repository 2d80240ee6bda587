import AsyncHTTPClient
import GQLHTTP
import Logging

extension GQLServer {
    /// How a ``GQLServer`` talks to its server: timeouts, the largest answer it accepts, compression, WebSocket
    /// keep-alive and reconnection, logging.
    ///
    /// ```swift
    /// var configuration = GQLServer.Configuration()
    /// configuration.timeout = .seconds(5)
    /// configuration.maximumResponseSize = 1 << 20
    /// let server = GQLServer(HTTP: "https://example.com/graphql", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The longest a query or mutation over HTTP may take, its answer's head and whole body included: a server
        /// that stalls or trickles the body fails with `GQLError.Code.timeout` then. Queries and mutations over a
        /// WebSocket get the whole operation within it, connecting included. Default 30 s.
        public var timeout: Duration = .seconds(30)
        /// The longest opening a connection may take; for a WebSocket, until the server's `connection_ack`.
        /// A refused connection (nothing listens at the port) fails at once with `GQLError.Code.connection`.
        /// Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// The largest answer accepted, in bytes after decompression (for a WebSocket, the largest message); a
        /// larger one fails with `GQLError.Code.responseTooLarge`. Default 16 MiB.
        public var maximumResponseSize = 1 << 24
        /// Whether to send `Accept-Encoding: gzip, deflate` and decompress answers. Default `true`.
        public var acceptsCompression = true
        /// How many characters of a failed answer's body an error message quotes. Default 512.
        public var errorBodyExcerptLength = 512
        /// How long a `graphql-transport-ws` connection may be idle before the client sends a ping. Default 15 s.
        public var pingInterval: Duration = .seconds(15)
        /// How long a WebSocket server may stay silent before the connection counts as lost and is reopened: after
        /// an unanswered ping (`graphql-transport-ws`) or between keep-alive messages (`graphql-ws`). AppSync's
        /// `connectionTimeoutMs` replaces it for AppSync connections. Default 30 s.
        public var keepAliveTimeout: Duration = .seconds(30)
        /// How a lost WebSocket connection is retried. Default: jittered exponential delays from 0.5 s to 30 s,
        /// for as long as a subscription wants the connection.
        public var reconnect = Reconnect()
        /// Where requests, sockets and reconnects are logged (URL without query, status, sizes, durations: never
        /// headers, payloads or bodies, which may hold credentials), used as given. `nil`, the default, logs
        /// through the toolkit's `GraphQLite.GQLNet` logger, which ``GQLDebug`` gates (silent unless
        /// `GQLDebug.level(.error)` or `.all`).
        public var logger: Logger?

        public init() {}

        /// The AsyncHTTPClient configuration these settings give: the shared HTTP layer's policy (no redirects,
        /// ``timeout`` as the longest stall), the connect timeout, compression.
        var httpClientConfiguration: HTTPClient.Configuration {
            HTTPExchange.clientConfiguration(
                timeout: timeout, connectTimeout: connectTimeout,
                decompression: acceptsCompression ? .enabled(limit: .size(maximumResponseSize)) : .disabled)
        }
    }
}
