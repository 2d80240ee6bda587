import NIOCore
import NIOHTTP1

/// Collects a refused upgrade's answer (status, and the start of the body for the error message), then closes the
/// connection.
final class WebSocketRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// How much of the body an error quotes.
    static let excerptLength = 256

    private let answer: EventLoopPromise<(HTTPResponseStatus, String)>
    private var status: HTTPResponseStatus?
    private var body: [UInt8] = []

    init(answer: EventLoopPromise<(HTTPResponseStatus, String)>) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body(let chunk):
            let room = Self.excerptLength - body.count
            if room > 0 { body += chunk.readableBytesView.prefix(room) }
        case .end:
            report()
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        report()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        report()
    }

    private func report() {
        // A completed promise ignores later completions.
        let text = String(decoding: body, as: UTF8.self)
        answer.succeed((status ?? .badGateway, text))
    }
}
