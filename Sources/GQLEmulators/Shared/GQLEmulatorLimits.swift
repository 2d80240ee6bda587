/// How long an emulator's connections may take and how large a request's head may be; the guards are the dev
/// server's (a request over a limit gets the emulated service's own error shape, and the connection is closed).
///
/// ```swift
/// var configuration = GQLStorageEmulator.Configuration()
/// configuration.limits.headerTimeout = .seconds(2)
/// ```
public struct GQLEmulatorLimits: Sendable, Equatable {
    /// How long a new connection may take to send its first request's headers before it gets 408 and is
    /// closed. Default 10 s.
    public var headerTimeout: Duration = .seconds(10)
    /// How long a connection may stay idle between requests before it is closed. Default 75 s.
    public var idleTimeout: Duration = .seconds(75)
    /// How long a request body may go without a byte arriving before the request is refused (S3's
    /// `RequestTimeout`) and nothing of it is kept. Default 20 s, as S3.
    public var bodyTimeout: Duration = .seconds(20)
    /// The most bytes of one header field, and of all of a request's header fields; a larger head gets 431 and
    /// the connection is closed. Default 64 KiB (S3 allows 8 KiB of headers, the AWS SDKs send under 4 KiB).
    public var maxHeaderBytes = 64 << 10
    /// The most header fields in a request. Default 200.
    public var maxHeaderFields = 200

    public init() {}
}
