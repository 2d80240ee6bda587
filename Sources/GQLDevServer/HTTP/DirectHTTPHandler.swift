import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore

/// Answers the POSTs that a compiled plan runs straight from a connection's bytes, before NIO's HTTP parser,
/// Hummingbird's handlers and their header types see them; hands the connection to them, for good, at the first
/// request it does not answer itself.
///
/// A request of the common shape — `POST <path> HTTP/1.1`, plain header lines, one `Content-Length`, a JSON
/// content type, at most `Connection: keep-alive` and an allowed `Origin` (``DirectRequestParser``) — whose single
/// operation a plan answers
/// (``HTTPTransport/answerNow(_:body:engine:)``: valid credentials, a planned query or mutation, or a document
/// refused for a limit or an error) is answered here with the same status, body and headers the usual path gives
/// it, with the CORS headers ``BrowserGuard`` adds for an allowed origin. At the first request of any other kind (a
/// GET, a batch, a WebSocket upgrade, an operation for the executor, an odd header line, an origin not allowed) the connection is handed over, from that request's first byte, to the usual path
/// (``PlannedHTTPHandler``, the router): every request before it has been answered, so answers stay in order and
/// the two parsers never share a request.
///
/// While it answers a connection it also does what Hummingbird's connection state handler would: closes it after
/// the idle timeout, and on graceful shutdown once the requests read before it have been answered: none read after
/// it is run (it could commit after the output was shut, its answer lost), and nothing more is read but the rest of
/// a body whose header block came before it. A
/// mutation queued for a group commit (``WriteQueue``) holds the connection's later requests, its half-close and
/// its reads until its answer is written; so do answers the client does not read (the channel is not writable),
/// until they drain, so a client that sends and never reads cannot make the server hold its answers in memory.
final class DirectHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let transport: HTTPTransport
    private let engine: DevEngine
    private let parser: DirectRequestParser
    private let connection: ConnectionGuard
    private let idleTimeout: TimeAmount
    /// ``GQLDevServer/Configuration/allowedOrigins``: a request from another origin is the router's to refuse.
    private let allowedOrigins: Set<String>

    // The state below is touched only on the channel's event loop (NIO calls a handler from that loop alone), and
    // no access to it is held across a call that could come back into the handler: every access is exclusive by
    // construction, so the runtime's check of each (`swift_beginAccess`, some 40 instructions a time, dozens per
    // request) is turned off for it.

    /// Whether the connection was handed to the usual path.
    @exclusivity(unchecked) private var handedOver = false
    /// Bytes received and not yet answered: an incomplete request, or requests waiting behind a queued mutation.
    @exclusivity(unchecked) private var pending: ByteBuffer?
    /// The request at the front of `pending` whose header block has been read, while its body arrives.
    @exclusivity(unchecked) private var awaitedBody: DirectRequestParser.Request?
    /// Whether a queued mutation's answer is awaited.
    @exclusivity(unchecked) private var awaitingCommit = false
    /// The `Origin` of the request whose queued mutation's answer is awaited.
    @exclusivity(unchecked) private var committingOrigin: String?
    /// Whether answering waits for the channel to become writable: the client is not reading its answers.
    @exclusivity(unchecked) private var blocked = false
    @exclusivity(unchecked) private var readHeld = false
    @exclusivity(unchecked) private var inputClosed = false
    /// Whether the server is shutting down gracefully: close once nothing is left to answer.
    @exclusivity(unchecked) private var quiescing = false
    /// On a graceful shutdown, how many of the bytes in `pending` were read before it began: a request that starts
    /// after them is never run (it might be committed with no way left to answer it).
    @exclusivity(unchecked) private var readBeforeQuiesce = 0
    /// Whether this handler closed the connection: nothing more is run, and reads pass, so that the connection
    /// guard can drain the input while it lingers.
    @exclusivity(unchecked) private var closed = false
    @exclusivity(unchecked) private var needsFlush = false
    @exclusivity(unchecked) private var lastActivity = NIODeadline.now()
    @exclusivity(unchecked) private var idleTimer: Scheduled<Void>?
    @exclusivity(unchecked) private var idleCheckStarted = false
    /// Whether the channel reads on its own after each read (NIO's `autoRead`): then this handler asks for the next
    /// read itself when a read ends (see ``channelReadComplete(context:)``).
    ///
    /// Read once, when the handler is added, and fixed from then on by construction: ``GuardedHTTPChannel`` adds it
    /// after the server bootstrap has set the connection's options; while this handler answers the connection no
    /// other handler sees anything of it but ``ConnectionGuard`` before it, which never changes the option, and
    /// nothing in the server sets it later; once the connection is handed over this handler asks for no read of its
    /// own. (Asking the channel at each read instead would cost its chain of option casts every request.) Debug
    /// builds check at each read that the option is still this value.
    @exclusivity(unchecked) private var autoRead = false
    /// The answers' bytes (their `Date` line made once a second).
    @exclusivity(unchecked) private var head = DirectAnswerHead()

    init(
        transport: HTTPTransport, engine: DevEngine, connection: ConnectionGuard, idleTimeout: TimeAmount,
        allowedOrigins: Set<String>
    ) {
        self.transport = transport
        self.allowedOrigins = allowedOrigins
        self.engine = engine
        self.parser = DirectRequestParser(path: transport.path, maxBodyBytes: min(transport.maxBodyBytes, 64 * 1024))
        self.connection = connection
        self.idleTimeout = idleTimeout
    }

    // MARK: Inbound

    func handlerAdded(context: ChannelHandlerContext) {
        autoRead = (try? context.channel.syncOptions?.getOption(ChannelOptions.autoRead)) ?? false
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        pending = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        pending = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !handedOver else { return context.fireChannelRead(data) }
        guard !closed else { return }
        var bytes = unwrapInboundIn(data)
        // Until the first request's headers have arrived the connection guard's header timeout applies.
        if !idleCheckStarted, connection.firstHeadersEnded {
            idleCheckStarted = true
            lastActivity = .now()
            scheduleIdleCheck(context, at: lastActivity + idleTimeout)
        }
        if var buffered = pending {
            pending = nil  // the buffer stays uniquely referenced while it grows
            buffered.writeBuffer(&bytes)
            pending = buffered
        } else {
            pending = bytes
        }
        answerPending(context)
        // A body that arrives keeps the connection busy; a header block trickling in does not (as with
        // Hummingbird's state handler, which hears of a request only once its head is complete).
        if awaitedBody != nil { lastActivity = .now() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context)
        if handedOver { return context.fireChannelReadComplete() }
        // The next read is asked for here, as the channel would ask for it once this returns: from this handler
        // it passes only the handlers before it, where the channel's own read would first pass every handler of
        // the usual path behind this one, which sees nothing of the connection until it is handed over. The
        // channel then finds a read pending and asks for none. The checks of ``read(context:)`` apply (a held
        // read is asked for again when what held it ends).
        assert(
            autoRead == (try? context.channel.syncOptions?.getOption(ChannelOptions.autoRead)) ?? autoRead,
            "the channel's autoRead changed while the direct handler answers its connection")
        if autoRead, !closed { read(context: context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !handedOver else { return context.fireUserInboundEventTriggered(event) }
        switch event {
        case ChannelEvent.inputClosed:
            inputClosed = true
            closeIfDone(context)
        case is ChannelShouldQuiesceEvent:
            guard !quiescing else { return }
            quiescing = true
            readBeforeQuiesce = pending?.readableBytes ?? 0
            answerPending(context)  // closes unless a request is being answered or its body is arriving
            flushIfNeeded(context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    // MARK: Outbound

    func read(context: ChannelHandlerContext) {
        guard !handedOver, !closed else { return context.read() }
        if !context.channel.isWritable { blocked = true }
        guard !awaitingCommit, !blocked else { return readHeld = true }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !handedOver, blocked, context.channel.isWritable {
            blocked = false
            resume(context)
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Answering

    /// Answers the complete requests at the front of `pending`, in order, until one is incomplete, is queued for
    /// a commit, or is not for this handler (then the connection is handed over).
    private func answerPending(_ context: ChannelHandlerContext) {
        while !handedOver, !closed, !awaitingCommit, !blocked, var buffer = pending {
            guard buffer.readableBytes > 0 else {
                pending = nil
                break
            }
            // On a graceful shutdown only the requests read before it are answered (and the body of one whose
            // header block had arrived): one read after it is left unrun, and the connection closes.
            guard !quiescing || awaitedBody != nil || readBeforeQuiesce > 0 else { break }
            // Answers the client does not read fill the socket: wait until they drain.
            guard context.channel.isWritable else {
                blocked = true
                flushIfNeeded(context)
                break
            }
            // A request whose header block was read before waits for its body without being read again.
            let outcome =
                awaitedBody.map { buffer.readableBytes >= $0.totalBytes ? .request($0) : .awaitingBody($0) }
                ?? buffer.withUnsafeReadableBytes { parser.parse($0) }
            awaitedBody = nil
            guard case .request(let request) = outcome else {
                switch outcome {
                case .awaitingBody(let request): awaitedBody = request
                case .other: handOver(context)
                case .incomplete where quiescing: readBeforeQuiesce = 0  // an incomplete header block is not waited for
                case .incomplete, .request: break
                }
                break
            }
            // The header values the request holds, as text (a bare request has none of them).
            let (origin, credentials, idempotencyKey) = buffer.withUnsafeReadableBytes { bytes in
                typealias Read = DirectRequestParser.Request
                return (
                    Read.text(request.origin, in: bytes),
                    DevAuthenticator.Credentials(
                        apiKey: Read.text(request.apiKey, in: bytes),
                        adminSecret: Read.text(request.adminSecret, in: bytes),
                        authorization: Read.text(request.authorization, in: bytes)),
                    Read.text(request.idempotencyKey, in: bytes)
                )
            }
            guard !request.simpleContentType,
                origin.map({ BrowserRules.allows($0, allowedOrigins) }) ?? true,
                let body = buffer.getBytes(at: buffer.readerIndex + request.headerBytes, length: request.bodyBytes)
            else { return handOver(context) }
            let answer = transport.answerNow(credentials, body: body, idempotencyKey: idempotencyKey, engine: engine)
            guard let answer else {
                return handOver(context)
            }
            buffer.moveReaderIndex(forwardBy: request.totalBytes)
            readBeforeQuiesce = max(0, readBeforeQuiesce - request.totalBytes)
            pending = buffer.readableBytes > 0 ? buffer : nil
            switch answer {
            case .answer(let status, let json):
                write(context, status, json, origin: origin)
                // The last request read is answered: its answer goes out now, before what is left of this read
                // (the request's and answer's memory, the way back through the pipeline, the next read asked for)
                // is done, while the client reads it. Requests that came in one read together still share one
                // write, the last one's.
                if pending == nil { flushIfNeeded(context) }
            case .queued(let writes, let mutation, let json):
                awaitingCommit = true
                committingOrigin = origin
                writes.submit(mutation, json: json, context: context, committed)
            }
        }
        closeIfDone(context)
    }

    /// Writes a queued mutation's answer, then goes on with what waited for it.
    private func committed(_ context: ChannelHandlerContext, _ json: String) {
        awaitingCommit = false
        guard context.channel.isActive, !closed else {
            pending = nil
            return
        }
        write(context, .ok, json, origin: committingOrigin)
        committingOrigin = nil
        resume(context)
    }

    /// Goes on after a queued mutation's answer or once the client has read enough answers: the requests that
    /// waited, then the reads that were held.
    private func resume(_ context: ChannelHandlerContext) {
        answerPending(context)
        flushIfNeeded(context)
        if !handedOver, !closed, !awaitingCommit, !blocked, readHeld {
            readHeld = false
            context.read()
        }
    }

    /// Closes the connection when the client closed its side or the server is shutting down, and nothing is left
    /// to answer (a half-closed client's incomplete request never completes; on shutdown a request whose body is
    /// arriving is waited for, an incomplete header block is not).
    private func closeIfDone(_ context: ChannelHandlerContext) {
        guard !handedOver, !closed, !awaitingCommit, !blocked else { return }
        guard inputClosed || (quiescing && awaitedBody == nil && readBeforeQuiesce == 0) else { return }
        close(context)
    }

    /// Closes the connection (lingering, in ``ConnectionGuard``) after what was written: the requests still in
    /// `pending` are dropped unrun, and reads held for them are let through so that the guard drains the input.
    private func close(_ context: ChannelHandlerContext) {
        closed = true
        flushIfNeeded(context)
        idleTimer?.cancel()
        idleTimer = nil
        pending = nil
        awaitedBody = nil
        context.close(promise: nil)
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    /// Hands the connection to the usual path: the unanswered bytes go on to the HTTP parser, and every later
    /// read, event and write passes through.
    private func handOver(_ context: ChannelHandlerContext) {
        handedOver = true
        transport.logger.debug("GQLDevServer: a connection is handed to the usual path at a request of another shape")
        idleTimer?.cancel()
        idleTimer = nil
        flushIfNeeded(context)
        connection.answersWritten()
        if let bytes = pending {
            pending = nil
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()  // handed over after a commit, no read is under way to end
        }
        if inputClosed { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
        if quiescing { context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        if readHeld {
            readHeld = false
            context.read()
        }
    }

    /// Writes a JSON answer with the headers the router's answers carry, in their order (with an allowed `origin`,
    /// ``BrowserGuard``'s `Access-Control-Allow-Origin` and `Vary`); flushed once nothing read is left to answer,
    /// or when the read ends.
    private func write(
        _ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ json: [UInt8], origin: String?
    ) {
        let closing = quiescing && readBeforeQuiesce == 0
        let allocator = context.channel.allocator
        write(context, head.answer(status, json, origin: origin, closing: closing, allocator: allocator))
    }

    /// ``write(_:_:_:origin:)`` for an answer made as text (a queued mutation's).
    private func write(
        _ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ json: String, origin: String?
    ) {
        let closing = quiescing && readBeforeQuiesce == 0
        let allocator = context.channel.allocator
        write(context, head.answer(status, json, origin: origin, closing: closing, allocator: allocator))
    }

    private func write(_ context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        needsFlush = true
        lastActivity = .now()
    }

    private func flushIfNeeded(_ context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    // MARK: Idle timeout

    /// Closes the connection once no body byte has arrived and no answer has been written for ``idleTimeout``, unless
    /// a queued mutation's answer is awaited, as Hummingbird's connection state handler does for its requests;
    /// checked from the end of the first request's headers on.
    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            idleTimer = nil
            guard !handedOver, !closed else { return }
            let now = NIODeadline.now()
            if awaitingCommit {
                scheduleIdleCheck(context, at: now + idleTimeout)
            } else if now >= lastActivity + idleTimeout {
                close(context)
            } else {
                scheduleIdleCheck(context, at: lastActivity + idleTimeout)
            }
        }
    }
}
