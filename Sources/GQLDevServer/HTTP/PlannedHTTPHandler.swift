import Foundation
import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Answers, on the connection's event loop, each POST that a compiled plan runs, and hands every other request
/// to Hummingbird's router unchanged.
///
/// A request through the router costs more than the plan that answers it: the request parts are yielded to an
/// async sequence, a task resumes to read them, the router and middleware run, and the response is written back
/// through an async writer. For a POST of one query or mutation that ``HTTPTransport/answerNow(_:body:engine:)`` can
/// answer (a planned operation, no `Origin`, a JSON content type, valid credentials, no fault injection) this
/// handler writes the answer itself, and so it does for such a POST whose document is refused (unparsable,
/// invalid, over a limit), which is then scanned once. Everything else — GET, OPTIONS, batches, operations the
/// executor runs, bad JSON, wrong credentials — goes on to the router, which answers it as before.
///
/// It sits after Hummingbird's connection state handler, so idle timeouts, `Connection: close` and graceful
/// shutdown see every request and answer. HTTP/1.1 answers leave in request order: while a request handed to the
/// router has not been answered, every later request on the connection goes to the router too; while a mutation
/// queued for a group commit (``WriteQueue``) has not been answered, the connection's later requests wait here
/// (and its reads are held), then go on in order; so do they while the client leaves the answers written here
/// unread (the channel is not writable), so a client that sends and never reads cannot make the server hold
/// its answers in memory.
final class PlannedHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A POST held while its body arrives.
    private struct Held {
        var head: HTTPRequest
        var body: ByteBuffer
    }

    private let transport: HTTPTransport
    /// The connection's guard, told of every answer's end (a refusal of the HTTP parser's waits for them).
    private let connection: ConnectionGuard?
    /// The engine whose plans answer here (`nil`: another executor, and every request goes to the router).
    private let engine: DevEngine?
    /// The largest body held here; a larger request goes to the router (which applies `maxBodyBytes`).
    private let maxHeldBytes: Int
    private var held: Held?
    /// Requests handed to the router whose answer has not ended.
    private var routed = 0
    /// What arrived on the connection while a queued mutation's answer was awaited, replayed in order after it.
    private enum Waiting {
        case read(NIOAny)
        /// An inbound user event, such as the client's half-close (`ChannelEvent.inputClosed`), which must not
        /// overtake the requests before it.
        case event(Any)
    }

    /// Whether a queued mutation's answer is awaited; the connection's later request parts and events wait in
    /// `waiting`, and its reads are held, until it is written.
    private var awaitingCommit = false
    /// Whether the client leaves answers written here unread (the channel is not writable); the connection's
    /// later request parts, events and reads wait as for a commit until they drain.
    private var blocked = false
    private var waiting = CircularBuffer<Waiting>()
    private var readHeld = false
    private var isRemoved = false
    private var needsFlush = false
    private var date = HTTPDate()

    init(transport: HTTPTransport, connection: ConnectionGuard?) {
        self.transport = transport
        self.connection = connection
        self.engine = transport.engine as? DevEngine
        self.maxHeldBytes = min(transport.maxBodyBytes, 64 * 1024)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !awaitingCommit, !blocked else { return waiting.append(.read(data)) }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Answers the client does not read fill the socket: wait until they drain.
            guard context.channel.isWritable else {
                blocked = true
                waiting.append(.read(data))
                return flush(context)
            }
            if routed == 0, held == nil, engine != nil, transport.mayAnswerNow(head, maxBodyBytes: maxHeldBytes) {
                held = Held(head: head, body: context.channel.allocator.buffer(capacity: 0))
                return
            }
            route(context, data, startsRequest: true)
        case .body(var part):
            guard var request = held else { return context.fireChannelRead(data) }
            guard request.body.readableBytes + part.readableBytes <= maxHeldBytes else {
                held = nil
                route(context, wrapInboundOut(.head(request.head)), startsRequest: true)
                route(context, wrapInboundOut(.body(request.body)))
                return route(context, data)
            }
            held = nil  // the buffer stays uniquely referenced while it grows
            request.body.writeBuffer(&part)
            held = request
        case .end:
            guard let request = held else { return context.fireChannelRead(data) }
            held = nil
            guard let engine else { return context.fireChannelRead(data) }  // not held without one
            switch transport.answerNow(request.head, body: request.body, engine: engine) {
            case .answer(let status, let json):
                write(context, status, json)
            case .queued(let writes, let mutation, let json):
                awaitingCommit = true
                writes.submit(mutation, json: json, context: context, committed)
            case nil:
                route(context, wrapInboundOut(.head(request.head)), startsRequest: true)
                if request.body.readableBytes > 0 { route(context, wrapInboundOut(.body(request.body))) }
                route(context, data)
            }
        }
    }

    /// Writes a queued mutation's answer, then goes on with the request parts and events that waited for it
    /// (nothing more when the connection has closed meanwhile: no request of a closed connection is run).
    private func committed(_ context: ChannelHandlerContext, _ json: String) {
        awaitingCommit = false
        guard !isRemoved, context.channel.isActive else { return waiting.removeAll() }
        write(context, .ok, json)
        resume(context)
    }

    /// Goes on with the request parts and events that waited, in order, then with the reads that were held.
    private func resume(_ context: ChannelHandlerContext) {
        while !awaitingCommit, !blocked, let next = waiting.popFirst() {
            switch next {
            case .read(let data): channelRead(context: context, data: data)
            case .event(let event): userInboundEventTriggered(context: context, event: event)
            }
        }
        channelReadComplete(context: context)
        if !awaitingCommit, !blocked, readHeld {
            readHeld = false
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if blocked, context.channel.isWritable {
            blocked = false
            if !isRemoved { resume(context) }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context)
        context.fireChannelReadComplete()
    }

    private func flush(_ context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !awaitingCommit, !blocked else { return waiting.append(.event(event)) }
        context.fireUserInboundEventTriggered(event)
    }

    func read(context: ChannelHandlerContext) {
        if routed == 0, !context.channel.isWritable { blocked = true }
        guard !awaitingCommit, !blocked else { return readHeld = true }
        context.read()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        isRemoved = true
        waiting.removeAll()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        if routed > 0 { routed -= 1 }
        context.write(data, promise: promise)
        connection?.requestAnswered()
    }

    private func route(_ context: ChannelHandlerContext, _ data: NIOAny, startsRequest: Bool = false) {
        if startsRequest { routed += 1 }
        context.fireChannelRead(data)
    }

    /// Writes a JSON answer with the headers the router's answers carry; flushed when the read ends.
    private func write(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ json: [UInt8]) {
        var body = context.channel.allocator.buffer(capacity: json.count)
        body.writeBytes(json)
        write(context, status, body: body)
    }

    /// ``write(_:_:_:)`` for an answer made as text (a queued mutation's).
    private func write(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ json: String) {
        var body = context.channel.allocator.buffer(capacity: json.utf8.count)
        body.writeString(json)
        write(context, status, body: body)
    }

    private func write(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, body: ByteBuffer) {
        var head = HTTPResponse(status: status)
        head.headerFields.reserveCapacity(4)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.date] = date.now()
        head.headerFields[.server] = "GQLDevServer"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        needsFlush = true
        connection?.requestAnswered()
    }
}
