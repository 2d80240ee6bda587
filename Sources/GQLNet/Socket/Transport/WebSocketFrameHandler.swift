import GQLCore
import NIOCore
import NIOWebSocket

/// What a WebSocket reports to its owner, on the socket's event loop, in the order it happened.
enum WebSocketEvent: Sendable {
    /// A complete text message (fragments joined, UTF-8 checked).
    case text(String)
    /// A message over the size limit began; it is dropped, and the socket is closing.
    case tooLarge
    /// The server broke the protocol (a text message that is not UTF-8, a masked frame …); the socket is closing.
    case invalid(GQLError)
}

/// How a WebSocket ended: the server's close frame (code and reason), or the error that ended it.
struct WebSocketClosure: Sendable {
    var code: UInt16?
    var reason: String?
    var error: GQLError?
}

/// The client side of RFC 6455 above NIO's frame codec, on the socket's event loop: joins fragments into messages
/// (at most `maximumMessageSize` bytes, dropping the rest of a larger one), answers pings, runs the close handshake
/// (echoing the server's close, or waiting at most `closeTimeout` for its answer to ours), masks what it sends and
/// refuses what a server must not send (masked or reserved-bit frames, continuations of nothing, text that is not
/// UTF-8). Messages are reported to `onEvent` on the event loop, with no task hop; the closure completes `closed`.
final class WebSocketFrameHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let maximumMessageSize: Int
    private let closeTimeout: TimeAmount
    private let target: String
    private let onEvent: @Sendable (WebSocketEvent) -> Void
    private let closed: EventLoopPromise<WebSocketClosure>
    private var context: ChannelHandlerContext?

    /// The message being assembled: its kind, its bytes so far (`nil` while the first frame is all there is, or
    /// when it is being dropped) and its size.
    private var assembling: WebSocketOpcode?
    private var buffer: ByteBuffer?
    private var size = 0
    private var dropping = false

    private var closeSent = false
    private var received: (code: UInt16?, reason: String?)?
    private var failure: GQLError?
    private var closeTimer: Scheduled<Void>?

    init(
        maximumMessageSize: Int, closeTimeout: TimeAmount, target: String, closed: EventLoopPromise<WebSocketClosure>,
        onEvent: @escaping @Sendable (WebSocketEvent) -> Void
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.closeTimeout = closeTimeout
        self.target = target
        self.closed = closed
        self.onEvent = onEvent
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if !context.channel.isActive { finish() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        finish()
    }

    // MARK: - Sending (called on the event loop)

    /// Sends a text message, unless the close handshake began (then `promise` fails with `.closed`).
    func send(text: String, promise: EventLoopPromise<Void>?) {
        guard let context, !closeSent else {
            promise?.fail(GQLError(.closed, "the WebSocket to \(target) is closing"))
            return
        }
        let frame = WebSocketFrame(
            fin: true, opcode: .text, maskKey: .random(), data: context.channel.allocator.buffer(string: text))
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
    }

    /// Starts the close handshake: sends a close frame and closes the socket when the server answers, or after
    /// `closeTimeout`. Does nothing once a close frame was sent.
    func close(code: UInt16, reason: String) {
        guard let context, !closeSent else { return }
        closeSent = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.writeInteger(code)
        data.writeString(reason)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        if received != nil {
            context.close(promise: nil)
        } else {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            closeTimer = context.eventLoop.scheduleTask(in: closeTimeout) { loopBound.value.close(promise: nil) }
        }
    }

    // MARK: - Receiving

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard received == nil, failure == nil else { return }  // nothing counts after the close
        guard frame.maskKey == nil else { return violation("a masked frame (servers must not mask)", code: 1002) }
        guard frame.reservedBits.isEmpty else {
            return violation("a frame with reserved bits set (no extension was agreed)", code: 1002)
        }
        switch frame.opcode {
        case .text, .binary:
            guard assembling == nil else {
                return violation("a new message before the previous one's last fragment", code: 1002)
            }
            assembling = frame.opcode
            size = 0
            dropping = false
            buffer = nil
            append(frame)
        case .continuation:
            guard assembling != nil else { return violation("a continuation frame with no message", code: 1002) }
            append(frame)
        case .ping:
            guard !closeSent else { return }
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.data)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            break
        case .connectionClose:
            receivedClose(frame, context: context)
        default:
            violation("a frame with the unknown opcode \(frame.opcode)", code: 1002)
        }
    }

    private func append(_ frame: WebSocketFrame) {
        size += frame.length
        if !dropping {
            if size > maximumMessageSize {
                dropping = true
                buffer = nil
                if assembling == .text { onEvent(.tooLarge) }
            } else if frame.fin, buffer == nil {
                complete(frame.data)  // the common case: one frame, no copy
            } else {
                var data = frame.data
                if buffer == nil { buffer = data } else { buffer?.writeBuffer(&data) }
            }
        }
        guard frame.fin else { return }
        if let whole = buffer, !dropping { complete(whole) }
        assembling = nil
        buffer = nil
    }

    private func complete(_ data: ByteBuffer) {
        guard assembling == .text else { return }  // binary messages have no meaning in the GraphQL protocols
        let text = data.withUnsafeReadableBytes { String(validating: $0, as: UTF8.self) }
        guard let text else { return violation("a text message that is not UTF-8", code: 1007) }
        onEvent(.text(text))
    }

    private func receivedClose(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        var data = frame.data
        guard data.readableBytes != 1 else { return violation("a close frame with a one-byte body", code: 1002) }
        let code: UInt16? = data.readInteger()
        let reason = data.readString(length: data.readableBytes)
        received = (code, reason)
        if closeSent {
            context.close(promise: nil)
            return
        }
        // Echo the server's code (RFC 6455 §5.5.1), then close the TCP connection.
        closeSent = true
        var answer = context.channel.allocator.buffer(capacity: 2)
        if let code { answer.writeInteger(Self.isSendable(code) ? code : 1002) }
        let reply = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: answer)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(reply)).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    /// The server broke the protocol: report it, send `code` and close.
    private func violation(_ what: String, code: UInt16) {
        let error = GQLError(.invalidResponse, "the WebSocket server at \(target) sent \(what)")
        failure = failure ?? error
        onEvent(.invalid(error))
        close(code: code, reason: "")
    }

    // MARK: - Ending

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            if case .invalidFrameLength = error {
                // The decoder refuses a frame over the limit from its header, before reading it.
                failure = failure ?? GQLError(.responseTooLarge, "a WebSocket message from \(target) is too large")
                onEvent(.tooLarge)
                close(code: 1009, reason: "")
            } else {
                violation("an invalid control frame (\(error))", code: 1002)
            }
            // The decoder cannot continue after an error: stop reading.
            context.close(promise: nil)
            return
        }
        failure = failure ?? GQLError(.connection, "the WebSocket to \(target) failed: \(describeConnectError(error))")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    private func finish() {
        closeTimer?.cancel()
        closeTimer = nil
        // A completed promise ignores later completions: the first report wins.
        if let received {
            closed.succeed(WebSocketClosure(code: received.code, reason: received.reason, error: nil))
        } else {
            closed.succeed(WebSocketClosure(code: nil, reason: nil, error: failure))
        }
    }

    /// Whether a close code may be sent back (1005, 1006 and 1015 only describe, and codes below 1000 are unused).
    private static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
