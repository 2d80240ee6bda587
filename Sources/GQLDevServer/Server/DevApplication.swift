import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging

/// Builds the Hummingbird application of a ``GQLDevServer``: one path for HTTP and WebSocket alike.
///
/// Requests with `Upgrade: websocket` go to the WebSocket router (the path, and `PATH/realtime` where AppSync
/// clients with a custom domain connect), every other request to the HTTP router (POST and GET on the path;
/// PUT, DELETE and PATCH get 405). Each connection is guarded (``GuardedHTTPChannel``): header and idle timeouts,
/// answers to malformed HTTP, bounded closes.
enum DevApplication {
    static func make(
        configuration: GQLDevServer.Configuration,
        http: HTTPTransport,
        webSocket: WebSocketTransport,
        eventLoops: EventLoopGroupProvider,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        let path = RouterPath(configuration.path)
        let router = Router()
        let allowedOrigins = Set(configuration.allowedOrigins)
        router.add(middleware: BrowserGuard(allowedOrigins: allowedOrigins))
        router.post(path) { request, _ in await http.post(request) }
        router.get(path) { request, _ in await http.get(request) }
        // Answered by BrowserGuard, which runs for matched routes only.
        router.on(path, method: .options) { _, _ in Response(status: .noContent) }
        for method in [HTTPRequest.Method.put, .delete, .patch] {
            router.on(path, method: method) { _, _ in
                var response = HTTPTransport.error(.methodNotAllowed, "Use POST, or GET for queries.")
                response.headers[.allow] = "GET, POST"
                return response
            }
        }

        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        // `PATH/realtime` too: AppSync clients given a custom domain connect there.
        let trimmed = configuration.path.hasSuffix("/") ? String(configuration.path.dropLast()) : configuration.path
        for webSocketPath in [path, RouterPath(trimmed + "/realtime")] {
            webSocketRouter.ws(webSocketPath) { request, _ in
                // A browser's page may open a socket only from an allowed origin (refused upgrade: HTTP 400).
                guard BrowserGuard<BasicRequestContext>.allowsUpgrade(request.headers[values: .origin], allowedOrigins)
                else { return .dontUpgrade }
                return .upgrade(webSocket.upgradeHeaders(for: request))
            } onUpgrade: { inbound, outbound, context in
                try await webSocket.serve(inbound, outbound, request: context.request)
            }
        }

        let webSocketResponder = webSocketRouter.buildResponder()
        let limits = configuration.limits
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                additionalChannelHandlers: [CloseAfterResponse(), PlannedHTTPInstaller(transport: http)],
                idleTimeout: limits.idleTimeout.timeAmount),
            ws: .init(maxFrameSize: WebSocketTransport.maxMessageBytes))
        let server = HTTPServerBuilder { responder in
            GuardedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: channelConfiguration),
                headerTimeout: limits.headerTimeout.timeAmount, direct: http,
                idleTimeout: limits.idleTimeout.timeAmount, allowedOrigins: allowedOrigins)
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "GQLDevServer"
            ),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? configuration.port)
            },
            eventLoopGroupProvider: eventLoops,
            logger: logger
        )
    }
}
