import AsyncHTTPClient
import Logging

extension GQLServer {
    /// How a ``GQLServer`` talks HTTP: timeouts, the largest answer it accepts, compression, logging.
    ///
    /// ```swift
    /// var configuration = GQLServer.Configuration()
    /// configuration.timeout = .seconds(5)
    /// configuration.maximumResponseSize = 1 << 20
    /// let server = GQLServer(HTTP: "https://example.com/graphql", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The longest a request may take, from sending it to the last byte of the answer. Default 30 s.
        public var timeout: Duration = .seconds(30)
        /// The longest opening a connection may take. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// The largest answer accepted, in bytes after decompression; a larger one fails with
        /// `GQLError.Code.responseTooLarge`. Default 16 MiB.
        public var maximumResponseSize = 1 << 24
        /// Whether to send `Accept-Encoding: gzip, deflate` and decompress answers. Default `true`.
        public var acceptsCompression = true
        /// How many characters of a failed answer's body an error message quotes. Default 512.
        public var errorBodyExcerptLength = 512
        /// Where requests are logged (method, URL, status, duration: never headers or bodies, which may hold
        /// credentials); `nil`, the default, logs nothing.
        public var logger: Logger?

        public init() {}

        /// The AsyncHTTPClient configuration these settings give.
        var httpClientConfiguration: HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration()
            configuration.timeout = .init(connect: .nanoseconds(connectTimeout.nanoseconds))
            configuration.decompression = acceptsCompression ? .enabled(limit: .size(maximumResponseSize)) : .disabled
            return configuration
        }
    }
}

extension Duration {
    /// The span in nanoseconds, saturating instead of overflowing (NIO's `TimeAmount` counts nanoseconds).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (nanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = nanos.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : total
    }
}
