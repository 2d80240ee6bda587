import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The first handler of every connection's pipeline, on raw bytes: it answers what the HTTP layers above cannot —
/// a request whose headers do not arrive in time (408), or that the HTTP parser refuses (400, or 431 for headers
/// over the size limit, reported by ``ParseErrorGuard``) — and makes every close of a connection bounded.
///
/// A connection is closed "lingering", as web servers do: the answer is flushed, the output shut, whatever the
/// client still sends is read and dropped, and the socket is closed when the client closes its side or after
/// ``lingerTime`` at the latest. Closing at once with unread input would make the kernel reset the connection,
/// and the client could lose the answer; waiting for the client without a bound (Hummingbird's half-close after
/// `Connection: close`) holds the descriptor as long as the client likes.
///
/// It is bytes in, bytes out, so it stays correct after a WebSocket upgrade, where it only passes data along.
package final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = IOData
    package typealias OutboundOut = IOData

    /// The content type and body of a refusal for a status and a message: a GraphQL-shaped JSON error for the dev
    /// server (the default), an XML or JSON error of the emulated service's own shape for GQLEmulators.
    package typealias RefusalBody =
        @Sendable (_ status: HTTPResponseStatus, _ message: String) -> (
            contentType: String, body: String
        )

    /// How long a closing connection is drained before it is closed regardless.
    static let lingerTime = TimeAmount.seconds(2)

    private let headerTimeout: TimeAmount
    // Touched only on the channel's event loop, never held across a call: exclusive by construction, so without the
    // runtime's check of each access (every read and write of the connection passes here).
    @exclusivity(unchecked) private var context: ChannelHandlerContext?
    @exclusivity(unchecked) private var headerTimer: Scheduled<Void>?
    @exclusivity(unchecked) private var lingerTimer: Scheduled<Void>?
    /// Whether the first request's header block ended (`\r\n\r\n` seen).
    @exclusivity(unchecked) private var headersEnded = false
    /// Whether the first request's header block has arrived (from then on an idle timeout applies instead).
    package var firstHeadersEnded: Bool { headersEnded }
    /// The last bytes seen while looking for the end of the header block.
    @exclusivity(unchecked) private var tail: UInt32 = 0
    /// Whether anything was written to the client.
    @exclusivity(unchecked) private var wroteAnything = false
    @exclusivity(unchecked) private var lingering = false
    @exclusivity(unchecked) private var inputClosed = false
    /// Requests the HTTP parser read and answers that ended on the usual path (``ParseErrorGuard`` and
    /// ``PlannedHTTPHandler`` count them): a refusal of the parser's waits for the answers of the requests before it.
    @exclusivity(unchecked) private var requestsRead = 0
    @exclusivity(unchecked) private var requestsAnswered = 0
    @exclusivity(unchecked) private var waitingRefusal: (status: HTTPResponseStatus, message: String)?

    private let refusalBody: RefusalBody

    package init(headerTimeout: TimeAmount, refusalBody: @escaping RefusalBody = ConnectionGuard.graphQLRefusal) {
        self.headerTimeout = headerTimeout
        self.refusalBody = refusalBody
    }

    /// The dev server's refusal: `{"errors":[{"message":…,"extensions":{"code":"BAD_REQUEST","status":…}}]}`.
    package static let graphQLRefusal: RefusalBody = { status, message in
        let body =
            #"{"errors":[{"message":"\#(message)","extensions":{"code":"BAD_REQUEST","status":\#(status.code)}}]}"#
        return ("application/json; charset=utf-8", body)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { startHeaderTimer(context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        headerTimer?.cancel()
        lingerTimer?.cancel()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        startHeaderTimer(context)
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        headerTimer?.cancel()
        lingerTimer?.cancel()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }  // a closing connection's input is dropped
        if !headersEnded {
            let buffer = unwrapInboundIn(data)
            for byte in buffer.readableBytesView {
                tail = (tail << 8) | UInt32(byte)
                if tail == 0x0D0A_0D0A || tail & 0xFFFF == 0x0A0A {
                    headersEnded = true
                    headerTimer?.cancel()
                    headerTimer = nil
                    break
                }
            }
        }
        context.fireChannelRead(data)
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        // A closing connection reads on, whatever the handlers above hold: input left unread when the socket is
        // closed makes the kernel reset the connection and discard the answers it has not sent yet.
        if lingering { context.read() }
        context.fireChannelReadComplete()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if lingering {
                closeWhenSent(context)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        wroteAnything = true
        context.write(data, promise: promise)
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .output { linger(context) }
        // A full close from above (a graceful shutdown, an idle timeout, the end of a WebSocket) closes lingering
        // too. It comes once the last answer is written, not sent: NIO would drop what it still holds, and a
        // socket closed with the client's requests still unread is reset, which can take answers the client has
        // not read yet with it (seen: 5 of 503 lost on a graceful shutdown). So the output is shut after what was
        // written, and the socket closed when the client closes its side or after ``lingerTime``; `promise`
        // completes when it is closed.
        if mode == .all, !lingering, context.channel.isActive {
            let halfClosed = inputClosed
            linger(context)
            context.flush()
            if !halfClosed { context.close(mode: .output, promise: nil) }
            if let promise { context.channel.closeFuture.cascade(to: promise) }
            return
        }
        context.close(mode: mode, promise: promise)
    }

    /// Says that every answer written so far is complete (``DirectHTTPHandler`` hands the connection to the HTTP
    /// parser only between requests), so a refusal of the parser's may be written after them.
    package func answersWritten() {
        wroteAnything = false
    }

    /// The HTTP parser read a request's head.
    package func requestRead() {
        requestsRead += 1
    }

    /// An answer to a request the HTTP parser read has ended; a refusal that waited for it goes out after it.
    package func requestAnswered() {
        requestsAnswered += 1
        if requestsAnswered >= requestsRead, let refusal = waitingRefusal {
            waitingRefusal = nil
            refuseAfterAnswers(refusal.status, refusal.message)
        }
    }

    /// Refuses what the HTTP parser could not read, after the answers to the requests it read before (they are
    /// still being answered: the refusal would otherwise overtake them and be taken for their answer).
    package func refuseAfterAnswers(_ status: HTTPResponseStatus, _ message: String) {
        guard requestsAnswered >= requestsRead else {
            if waitingRefusal == nil { waitingRefusal = (status, message) }
            return
        }
        wroteAnything = false  // every answer written so far has ended
        refuse(status, message)
    }

    /// Answers with `status` and a GraphQL-shaped JSON error, then closes lingering. Nothing happens when an answer
    /// was already written on this connection (the parser's own error then just closes it).
    package func refuse(_ status: HTTPResponseStatus, _ message: String) {
        guard let context, !lingering else { return }
        // This handler is the first, so its own close would not pass its `close(context:mode:promise:)`: the
        // lingering close starts here, and from now on the client's input is dropped (a request completed after
        // its refusal never runs).
        guard !wroteAnything else {
            linger(context)
            context.close(mode: .output, promise: nil)
            return
        }
        let (contentType, body) = refusalBody(status, message)
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count + 160)
        buffer.writeString("HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n")
        buffer.writeString("Content-Type: \(contentType)\r\n")
        buffer.writeString("Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n")
        buffer.writeString(body)
        headerTimer?.cancel()
        wroteAnything = true
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        linger(context)
        context.close(mode: .output, promise: nil)
    }

    private func startHeaderTimer(_ context: ChannelHandlerContext) {
        guard headerTimer == nil, !headersEnded else { return }
        let seconds = Double(headerTimeout.nanoseconds) / 1e9
        headerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: headerTimeout) { [self] in
            headerTimer = nil
            guard !headersEnded else { return }
            refuse(.requestTimeout, "The request headers did not arrive within \(seconds) s.")
        }
    }

    /// Drops further input and closes the connection when the client has closed its side and what was written has
    /// been sent, or after ``lingerTime``.
    private func linger(_ context: ChannelHandlerContext) {
        guard !lingering else { return }
        lingering = true
        headerTimer?.cancel()
        context.read()  // drained even when a handler above holds its reads (see `channelReadComplete`)
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) {
            context.close(promise: nil)
        }
        if inputClosed {
            context.eventLoop.assumeIsolated().execute { [self] in closeWhenSent(context) }
        }
    }

    /// Closes the socket once what was written before has gone to the kernel: an empty write after it completes
    /// then (at once when the output is shut already, which NIO does only after the writes before it).
    private func closeWhenSent(_ context: ChannelHandlerContext) {
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: sent)
        sent.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Sits right after the HTTP request decoder and turns its parse errors — a garbage request line, a negative or
/// repeated `Content-Length`, headers over the size limit — into an answer and a close (``ConnectionGuard``)
/// instead of an error no one answers; the answer goes out after those of the requests read before. It counts the
/// request heads the decoder reads while the decoder is there, and passes everything else along unread, so it is
/// harmless after a WebSocket upgrade.
package final class ParseErrorGuard: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart

    private let connection: ConnectionGuard
    /// Whether the decoder has left the pipeline (a WebSocket upgrade): what arrives is no longer HTTP.
    private var decoderGone = false

    package init(connection: ConnectionGuard) {
        self.connection = connection
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !decoderGone {
            let decoder = try? context.pipeline.syncOperations.context(
                handlerType: ByteToMessageHandler<NIOHTTP1.HTTPRequestDecoder>.self)
            if decoder == nil {
                decoderGone = true
            } else if case .head = unwrapInboundIn(data) {
                connection.requestRead()
            }
        }
        context.fireChannelRead(data)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        switch parseError {
        case .headerOverflow:
            connection.refuseAfterAnswers(.requestHeaderFieldsTooLarge, "The request headers are too large.")
        default:
            connection.refuseAfterAnswers(.badRequest, "The request is not valid HTTP/1.1 (\(parseError)).")
        }
    }
}

/// Ends a connection after a response that says `Connection: close` (a 413, say): the output is shut once the
/// response is flushed, and ``ConnectionGuard`` closes the socket after a bounded drain. Hummingbird by itself
/// only closes when the *request* asked for it, and then waits for the client without a bound.
package final class CloseAfterResponse: ChannelOutboundHandler, RemovableChannelHandler {
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    package init() {}

    private var closing = false

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closing = head.headerFields[.connection].map(Self.isClose) ?? false
        case .end where closing:
            context.writeAndFlush(data, promise: promise)
            context.close(mode: .output, promise: nil)
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    /// Whether a `Connection` value is `close` in any case, without building a lowercased copy per response.
    static func isClose(_ value: String) -> Bool {
        let close = "close".utf8
        return value.utf8.count == close.count
            && zip(value.utf8, close).allSatisfy { byte, expected in byte | 0x20 == expected }
    }
}
