import GQLCore
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 channel with WebSocket upgrade, with the guards of ``ConnectionGuard`` added to each
/// connection: a header timeout, answers to requests the HTTP parser refuses, and bounded closes.
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let headerTimeout: TimeAmount
    /// The transport whose planned POSTs ``DirectHTTPHandler`` answers from the connection's bytes (`nil`: every
    /// request takes the usual path).
    let direct: HTTPTransport?
    let idleTimeout: TimeAmount
    /// ``GQLDevServer/Configuration/allowedOrigins``, for the direct path's CORS answers.
    let allowedOrigins: Set<String>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let headerTimeout = headerTimeout
        let (direct, idleTimeout, allowedOrigins) = (direct, idleTimeout, allowedOrigins)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let connection = ConnectionGuard(headerTimeout: headerTimeout)
            try pipeline.addHandler(connection, position: .first)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<NIOHTTP1.HTTPRequestDecoder>.self)
            try pipeline.addHandler(ParseErrorGuard(connection: connection), position: .after(decoder))
            if let direct, let engine = direct.engine as? DevEngine, !direct.faults.isActive {
                let handler = DirectHTTPHandler(
                    transport: direct, engine: engine, connection: connection, idleTimeout: idleTimeout,
                    allowedOrigins: allowedOrigins)
                try pipeline.addHandler(handler, position: .after(connection))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await inner.handle(value: value, logger: logger)
        }
    }
}

extension Duration {
    /// The duration as NIO's `TimeAmount` (saturating: a huge limit is "never", not a trap).
    package var timeAmount: TimeAmount { .nanoseconds(nanoseconds) }
}
