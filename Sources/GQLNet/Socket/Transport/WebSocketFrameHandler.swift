import GQLCore
import GQLHTTP
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
/// (at most `maximumMessageSize` bytes; a larger one, text or binary, ends the socket with close 1009), answers
/// pings, runs the close handshake (echoing the server's close, or waiting at most `closeTimeout` for its answer to
/// ours), masks what it sends and refuses what a server must not send (masked or reserved-bit frames, continuations
/// of nothing, text that is not UTF-8). Messages are reported to `onEvent` on the event loop, with no task hop; the
/// closure completes `closed`.
///
/// Memory stays flat whatever the server sends, because the handler stops reading (it holds NIO's `read`) while
///  - the channel is not writable (the server does not read what we write),
///  - a pong waits behind the previous one: at most one pong is in flight, and a ping that arrives meanwhile is
///    answered (the latest one only) once it was written,
///  - the owner asked it to (``setReadingPaused(_:)``: the caller's results are not being consumed).
///
/// ``send(text:promise:)`` completes once the message was handed to NIO and the channel is writable again, so a
/// writer that waits for it never buffers more than NIO's high watermark and one message.
final class WebSocketFrameHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
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
    private var lateClose: Scheduled<Void>?

    /// Whether a pong was written and its write has not completed; the payload of the latest ping since, if any.
    private var pongInFlight = false
    private var nextPong: ByteBuffer?
    /// The owner's pause (see ``setReadingPaused(_:)``), and a `read` held back while any reason to pause holds.
    private var ownerPaused = false
    private var heldRead = false
    /// `send` promises waiting for the channel to become writable again.
    private var writabilityWaiters: [EventLoopPromise<Void>] = []
    /// What the handler did, for the tests' memory bounds.
    private(set) var statistics = Statistics()

    struct Statistics: Sendable, Equatable {
        var pingsReceived = 0
        var pongsSent = 0
        /// Pings whose pong was replaced by a later one's (coalesced while a pong was in flight).
        var pingsCoalesced = 0
        /// How many times a `read` was held back.
        var readsHeld = 0
    }

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
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        guard let promise else { return }
        if context.channel.isWritable {
            promise.succeed()
        } else {
            writabilityWaiters.append(promise)
        }
    }

    /// Stops (or resumes) reading from the socket for the owner; pings already read are still answered.
    func setReadingPaused(_ paused: Bool) {
        ownerPaused = paused
        if let context { mayRead(context) }
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
        mayRead(context)  // the server's answer is all that is read from now on
        if received != nil {
            context.close(promise: nil)
        } else {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            closeTimer = context.eventLoop.scheduleTask(in: closeTimeout) { loopBound.value.close(promise: nil) }
        }
    }

    /// Starts the close handshake after `delay`, unless it began before.
    func closeEventually(code: UInt16, reason: String, within delay: TimeAmount) {
        guard let context, !closeSent, lateClose == nil else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        lateClose = context.eventLoop.scheduleTask(in: delay) { handler.value.close(code: code, reason: reason) }
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
            statistics.pingsReceived += 1
            guard !closeSent else { return }
            if pongInFlight {
                if nextPong != nil { statistics.pingsCoalesced += 1 }
                nextPong = frame.data
            } else {
                sendPong(frame.data, context: context)
            }
        case .pong:
            break
        case .connectionClose:
            receivedClose(frame, context: context)
        default:
            violation("a frame with the unknown opcode \(frame.opcode)", code: 1002)
        }
    }

    /// Writes a pong; the next one waits until this one's write completed.
    private func sendPong(_ payload: ByteBuffer, context: ChannelHandlerContext) {
        pongInFlight = true
        statistics.pongsSent += 1
        let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: payload)
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(pong)).whenComplete { _ in loopBound.value.pongWritten() }
    }

    private func pongWritten() {
        pongInFlight = false
        guard let context else { return }
        if let payload = nextPong, !closeSent {
            nextPong = nil
            sendPong(payload, context: context)
        }
        nextPong = nil
        mayRead(context)
    }

    private func append(_ frame: WebSocketFrame) {
        size += frame.length
        if !dropping {
            if size > maximumMessageSize {
                // Text or binary alike: a message that will not fit ends the socket at once.
                dropping = true
                buffer = nil
                tooLarge()
                return
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

    /// A message over the limit: reported, close 1009, and nothing after it counts.
    private func tooLarge() {
        guard failure == nil else { return }
        failure = GQLError(.responseTooLarge, "a WebSocket message from \(target) is too large")
        onEvent(.tooLarge)
        close(code: 1009, reason: "")
    }

    // MARK: - Back-pressure

    func read(context: ChannelHandlerContext) {
        if isPaused(context) {
            if !heldRead { statistics.readsHeld += 1 }
            heldRead = true
        } else {
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            let waiters = writabilityWaiters
            writabilityWaiters.removeAll()
            for waiter in waiters { waiter.succeed() }
        }
        mayRead(context)
        context.fireChannelWritabilityChanged()
    }

    /// Reading waits while the server does not take what we write, while a pong waits behind another, and while
    /// the owner paused it; once the close handshake began, only the server's answer matters.
    private func isPaused(_ context: ChannelHandlerContext) -> Bool {
        if closeSent { return false }
        return ownerPaused || nextPong != nil || !context.channel.isWritable
    }

    private func mayRead(_ context: ChannelHandlerContext) {
        guard heldRead, !isPaused(context) else { return }
        heldRead = false
        context.read()
    }

    // MARK: - Ending

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOWebSocketError {
            if case .invalidFrameLength = error {
                // The decoder refuses a frame over the limit from its header, before reading it.
                tooLarge()
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
        lateClose?.cancel()
        lateClose = nil
        let waiters = writabilityWaiters
        writabilityWaiters.removeAll()
        for waiter in waiters { waiter.fail(GQLError(.closed, "the WebSocket to \(target) closed")) }
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
