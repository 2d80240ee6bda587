import NIOCore
import NIOHTTP1

/// Collects a refused upgrade's answer (status, and the start of the body for the error message), then closes the
/// connection.
///
/// The body is only read for the error's excerpt: the answer is reported, and the connection closed, as soon as
/// the excerpt is full, at the body's end, or at `deadline` after the head (a body that never ends, or trickles;
/// ``WebSocketChannel`` gives it a second at most, so the refusal, with its status, is reported before the attempt's
/// own deadline), whichever comes first.
final class WebSocketRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// How much of the body an error quotes, and so how much is read.
    static let excerptLength = 256

    private let answer: EventLoopPromise<(HTTPResponseStatus, String)>
    private let deadline: TimeAmount
    private var status: HTTPResponseStatus?
    private var body: [UInt8] = []
    private var timer: Scheduled<Void>?

    init(answer: EventLoopPromise<(HTTPResponseStatus, String)>, deadline: TimeAmount) {
        self.answer = answer
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: deadline) {
            handler.value.report()
            loopBound.value.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body(let chunk):
            let room = Self.excerptLength - body.count
            if room > 0 { body += chunk.readableBytesView.prefix(room) }
            if body.count >= Self.excerptLength { end(context) }
        case .end:
            end(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        report()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        report()
    }

    private func end(_ context: ChannelHandlerContext) {
        report()
        context.close(promise: nil)
    }

    private func report() {
        timer?.cancel()
        timer = nil
        // A completed promise ignores later completions.
        let text = String(decoding: body, as: UTF8.self)
        answer.succeed((status ?? .badGateway, text))
    }
}
