import GQLCore
import GQLHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// One client WebSocket on a NIO channel: TCP (and TLS for `wss`), the HTTP/1.1 upgrade with exactly the headers
/// of its ``WebSocketHandshake``, then ``WebSocketFrameHandler`` for the frames.
///
/// ```swift
/// let socket = try await WebSocketChannel.connect(handshake, settings: settings) { event in … }
/// try await socket.send("{\"type\":\"connection_init\"}")
/// socket.close(code: 1000, reason: "done")
/// let closure = await socket.closure
/// ```
final class WebSocketChannel: Sendable {
    struct Settings: Sendable {
        /// The largest message accepted, in bytes; a larger one is reported as ``WebSocketEvent/tooLarge``.
        var maximumMessageSize: Int
        /// Bounds the TCP connect, and then the TLS handshake and the upgrade together.
        var connectTimeout: Duration
        /// How long the server may take to answer a close frame.
        var closeTimeout: Duration = .seconds(2)
    }

    private let channel: any Channel
    private let handler: NIOLoopBound<WebSocketFrameHandler>
    private let closed: EventLoopFuture<WebSocketClosure>

    private init(
        channel: any Channel, handler: NIOLoopBound<WebSocketFrameHandler>, closed: EventLoopFuture<WebSocketClosure>
    ) {
        self.channel = channel
        self.handler = handler
        self.closed = closed
    }

    /// How the socket ended; waits until it has.
    var closure: WebSocketClosure {
        get async {
            // The future always succeeds (the handler reports failures inside the closure).
            (try? await closed.get()) ?? WebSocketClosure(error: GQLError(.connection, "the WebSocket was lost"))
        }
    }

    /// Sends one text message; returns once NIO took it and the channel is writable again (the server reads what
    /// it is sent), so a caller that waits never queues more than NIO's high watermark.
    func send(_ text: String) async throws {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        let handler = self.handler
        channel.eventLoop.execute { handler.value.send(text: text, promise: promise) }
        try await promise.futureResult.get()
    }

    /// Stops (or resumes) reading from the socket: the owner's consumer lags behind.
    ///
    /// Always queued on the event loop, even from it: the owner decides under its lock, from the loop (a result
    /// that fills a buffer) or from a caller's thread (one that drains it), and only queueing both keeps them in the
    /// order they were decided — a resume queued from a caller and a pause run at once on the loop would otherwise
    /// leave reading on while the owner counts it paused.
    func setReadingPaused(_ paused: Bool) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.setReadingPaused(paused) }
    }

    /// What the frame handler counted so far (pings, pongs, held reads).
    var statistics: WebSocketFrameHandler.Statistics {
        get async {
            let handler = self.handler
            return (try? await channel.eventLoop.submit { handler.value.statistics }.get()) ?? .init()
        }
    }

    /// The bytes written and not yet taken by the operating system.
    var bufferedBytes: Int {
        get async { (try? await channel.getOption(.bufferedWritableBytes).get()) ?? 0 }
    }

    /// Starts the close handshake (at most ``Settings/closeTimeout``); ``closure`` tells when it ended.
    func close(code: UInt16, reason: String) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.close(code: code, reason: reason) }
    }

    /// Starts the close handshake after `delay` unless it began before (a writer stuck behind a server that does
    /// not read never reaches its close).
    func closeEventually(code: UInt16, reason: String, within delay: Duration) {
        let handler = self.handler
        let delay = TimeAmount.nanoseconds(delay.nanoseconds)
        channel.eventLoop.execute { handler.value.closeEventually(code: code, reason: reason, within: delay) }
    }

    /// Drops the connection without a close handshake.
    func abort() {
        channel.close(promise: nil)
    }

    // MARK: - Connecting

    private enum Upgrade: Sendable {
        case upgraded(WebSocketChannel)
        /// The server answered with another status: its status and the start of its body.
        case refused(EventLoopFuture<(HTTPResponseStatus, String)>)
    }

    /// Connects, upgrades and returns the open socket; `onEvent` gets its messages on the event loop from then on.
    ///
    /// - Throws: ``GQLError`` `.connection` (unreachable, TLS, a bad answer to the upgrade), `.unauthorized` or
    ///   `.http` (the upgrade refused, with the status), `.timeout`, `.cancelled`.
    static func connect(
        _ handshake: WebSocketHandshake, settings: Settings, onEvent: @escaping @Sendable (WebSocketEvent) -> Void
    ) async throws -> WebSocketChannel {
        let tls = try handshake.usesTLS ? tlsContext() : nil
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(settings.connectTimeout.nanoseconds))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        let channel: any Channel
        let upgrade: EventLoopFuture<Upgrade>
        do {
            (channel, upgrade) = try await bootstrap.connect(host: handshake.host, port: handshake.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    (channel, try configure(channel, handshake, settings, tls: tls, onEvent: onEvent))
                }
            }
        } catch {
            if Task.isCancelled { throw GQLError(.cancelled, "connecting to \(handshake.loggableURL) was cancelled") }
            throw GQLError(
                .connection, "cannot connect to \(handshake.loggableURL): \(describeConnectError(error))")
        }
        let outcome: Upgrade
        do {
            outcome = try await withTaskCancellationHandler {
                try await upgrade.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            channel.close(promise: nil)
            if let error = error as? GQLError { throw error }
            if Task.isCancelled { throw GQLError(.cancelled, "connecting to \(handshake.loggableURL) was cancelled") }
            throw GQLError(
                .connection,
                "the WebSocket upgrade at \(handshake.loggableURL) failed: \(describeUpgradeError(error))")
        }
        switch outcome {
        case .upgraded(let socket):
            return socket
        case .refused(let answer):
            // The refusal handler ends the answer at its excerpt or its deadline; cancelling ends it too.
            let (status, body) = try await withTaskCancellationHandler {
                try await answer.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            throw handshake.refusal(status: status, body: body)
        }
    }

    /// Sets up TLS, the HTTP codec and the upgrade on a new channel; the future completes when the server answered.
    private static func configure(
        _ channel: any Channel, _ handshake: WebSocketHandshake, _ settings: Settings, tls: NIOSSLContext?,
        onEvent: @escaping @Sendable (WebSocketEvent) -> Void
    ) throws -> EventLoopFuture<Upgrade> {
        if let tls {
            // SNI carries host names only, not addresses.
            let isAddress = (try? SocketAddress(ipAddress: handshake.host, port: 0)) != nil
            let handler = try NIOSSLClientHandler(context: tls, serverHostname: isAddress ? nil : handshake.host)
            try channel.pipeline.syncOperations.addHandler(handler)
        }
        // NIO's decoder refuses a frame over this from its header, before reading it; control frames need 125.
        let frameLimit = min(max(settings.maximumMessageSize, 125), Int(UInt32.max))
        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
            maxFrameSize: frameLimit, enableAutomaticErrorHandling: false,
            upgradePipelineHandler: { channel, response in
                channel.eventLoop.makeCompletedFuture {
                    try handshake.check(response)
                    let closed = channel.eventLoop.makePromise(of: WebSocketClosure.self)
                    let handler = WebSocketFrameHandler(
                        maximumMessageSize: max(settings.maximumMessageSize, 0),
                        closeTimeout: .nanoseconds(settings.closeTimeout.nanoseconds), target: handshake.loggableURL,
                        closed: closed, onEvent: onEvent)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    return .upgraded(
                        WebSocketChannel(
                            channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop),
                            closed: closed.futureResult))
                }
            })
        let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
            upgradeRequestHead: handshake.requestHead, upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture {
                    let answer = channel.eventLoop.makePromise(of: (HTTPResponseStatus, String).self)
                    try channel.pipeline.syncOperations.addHandler(
                        WebSocketRefusalHandler(
                            answer: answer,
                            deadline: .nanoseconds(min(settings.connectTimeout, .seconds(1)).nanoseconds)))
                    return .refused(answer.futureResult)
                }
            })
        var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
        pipeline.leftOverBytesStrategy = .forwardBytes
        let upgraded = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
            configuration: pipeline)
        // The connect timeout covers TCP; this covers a server that accepts and never answers the upgrade.
        let result = channel.eventLoop.makePromise(of: Upgrade.self)
        let timeout = channel.eventLoop.scheduleTask(in: .nanoseconds(settings.connectTimeout.nanoseconds)) {
            result.fail(
                GQLError(
                    .timeout,
                    "the WebSocket server at \(handshake.loggableURL) did not answer the upgrade within "
                        + "\(settings.connectTimeout)"))
            channel.close(promise: nil)
        }
        // A completed promise ignores later completions: whichever comes first decides.
        upgraded.whenComplete { outcome in
            timeout.cancel()
            result.completeWith(outcome)
        }
        channel.closeFuture.whenComplete { _ in
            timeout.cancel()
            result.fail(
                GQLError(
                    .connection,
                    "the WebSocket server at \(handshake.loggableURL) closed the connection before answering the "
                        + "upgrade"))
        }
        return result.futureResult
    }

    /// One TLS context for every `wss` socket of the process: building one reads the system's trust roots.
    private static let sharedTLS = Result { try NIOSSLContext(configuration: .makeClientConfiguration()) }

    private static func tlsContext() throws -> NIOSSLContext {
        do {
            return try sharedTLS.get()
        } catch {
            throw GQLError(.connection, "TLS is not available: \(error)")
        }
    }

    private static func describeUpgradeError(_ error: any Error) -> String {
        switch error as? NIOHTTPClientUpgradeError {
        case .upgraderDeniedUpgrade?:
            return "the server's Sec-WebSocket-Accept does not match the key sent"
        case .responseProtocolNotFound?:
            return "the server switched protocols without naming websocket in its Upgrade header"
        case .invalidHTTPOrdering?:
            return "the server's answer is not valid HTTP"
        default:
            break
        }
        if error is HTTPParserError { return "the server's answer is not valid HTTP" }
        if case ChannelError.inappropriateOperationForState? = error as? ChannelError {
            return "the server closed the connection before answering"
        }
        return describeConnectError(error)
    }
}
