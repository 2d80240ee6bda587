import GQLDevServer
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Hummingbird's HTTP/1.1 channel with the dev server's connection guards (``ConnectionGuard``,
/// ``ParseErrorGuard``, ``CloseAfterResponse``) added to each connection: a header timeout, answers to requests
/// the HTTP parser refuses (in the emulated service's shape), bounded closes.
struct GuardedEmulatorChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let inner: HTTP1Channel
    let headerTimeout: TimeAmount
    let refusalBody: ConnectionGuard.RefusalBody

    init(
        responder: @escaping HTTPChannelHandler.Responder, limits: GQLEmulatorLimits,
        refusalBody: @escaping ConnectionGuard.RefusalBody
    ) {
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
            maxHeaderFieldCount: limits.maxHeaderFields)
        inner = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [CloseAfterResponse()], idleTimeout: limits.idleTimeout.timeAmount,
                httpDecoderConfiguration: decoder))
        headerTimeout = limits.headerTimeout.timeAmount
        self.refusalBody = refusalBody
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (headerTimeout, refusalBody) = (headerTimeout, refusalBody)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let connection = ConnectionGuard(headerTimeout: headerTimeout, refusalBody: refusalBody)
            try pipeline.addHandler(connection, position: .first)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<NIOHTTP1.HTTPRequestDecoder>.self)
            try pipeline.addHandler(ParseErrorGuard(connection: connection), position: .after(decoder))
            try pipeline.addHandler(ExpectContinue(), position: .after(decoder))
            try pipeline.addHandler(AnswerCounter(connection: connection), position: .last)
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Tells the connection's guard of each answer's end, so a refusal of the HTTP parser's goes out after the answers
/// to the requests read before it (and never waits for ever).
private final class AnswerCounter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connection: ConnectionGuard

    init(connection: ConnectionGuard) { self.connection = connection }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ended = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ended { connection.requestAnswered() }
    }
}

/// Answers `Expect: 100-continue` with `100 Continue` as the request's head arrives, so a client that waits for it
/// before sending the body (botocore, curl) sends at once instead of after its own timeout (a second each).
private final class ExpectContinue: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
            head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" })
        {
            let answer = HTTPResponseHead(version: head.version, status: .continue)
            context.writeAndFlush(wrapOutboundOut(.head(answer)), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
