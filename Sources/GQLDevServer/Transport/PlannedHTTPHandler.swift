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
    private func write(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ json: String) {
        var body = context.channel.allocator.buffer(capacity: json.utf8.count)
        body.writeString(json)
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

extension WriteQueue {
    /// Queues `mutation` for a group commit and hands its answer's body (`json` of its outcome, formatted on the
    /// connection's event loop, not on the queue's one worker) to `committed` on that loop.
    func submit(
        _ mutation: @escaping ModelStore.Mutation, json: @escaping @Sendable (Result<GQLValues, any Error>) -> String,
        context: ChannelHandlerContext, _ committed: @escaping (ChannelHandlerContext, String) -> Void
    ) {
        let loop = context.eventLoop
        let bound = NIOLoopBound((committed, context), eventLoop: loop)
        submit(mutation) { result in
            loop.execute {
                let (committed, context) = bound.value
                committed(context, json(result))
            }
        }
    }
}

/// Puts a ``PlannedHTTPHandler`` after Hummingbird's connection state handler when the first request arrives
/// (Hummingbird adds its HTTP handlers to a connection only once it knows the connection is not a WebSocket
/// upgrade, after the handlers it is given), then leaves the pipeline.
final class PlannedHTTPInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let transport: HTTPTransport

    init(transport: HTTPTransport) {
        self.transport = transport
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let pipeline = context.pipeline.syncOperations
        if let state = try? pipeline.handler(type: HTTPConnectionStateHandler.self) {
            let connection = try? pipeline.handler(type: ConnectionGuard.self)
            try? pipeline.addHandler(
                PlannedHTTPHandler(transport: transport, connection: connection), position: .after(state))
        }
        context.fireChannelRead(data)
        pipeline.removeHandler(context: context, promise: nil)
    }
}

/// The `Date` header's value (RFC 9110's IMF-fixdate), formatted once per second.
struct HTTPDate {
    private var second = -1
    private var text = ""

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    mutating func now() -> String {
        let current = time(nil)
        if current != second {
            second = current
            text = Self.format(current)
        }
        return text
    }

    static func format(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

extension HTTPTransport {
    /// Whether a request with this head might be answered by ``answerNow(_:body:engine:)``: a POST to the GraphQL path
    /// that the router would not refuse before reading it (no `Origin`, which ``BrowserGuard`` decides on; a
    /// content type no browser sends without a preflight), with no `Expect` or `Connection` header to honour, a
    /// body of at most `maxBodyBytes` when its length is declared, and no fault injection configured (the caller
    /// checks that the engine is a ``DevEngine``).
    func mayAnswerNow(_ head: HTTPRequest, maxBodyBytes: Int) -> Bool {
        guard head.method == .post, head.path == path, !faults.isActive else { return false }
        var contentType: String?
        var declaredLength = false
        for field in head.headerFields {  // one pass: this runs for every POST
            switch field.name {
            case .origin, .expect, .connection: return false
            case .contentType:
                guard contentType == nil else { return false }  // a repeated one: the router decides
                contentType = field.value
            case .contentLength:
                // A repeated or unreadable length, or a body too large to hold: the router decides.
                guard !declaredLength, let length = Int(field.value), length <= maxBodyBytes else { return false }
                declaredLength = true
            default: continue
            }
        }
        guard let contentType else { return false }
        return !BrowserRules.isSimple(contentType)
    }

    /// An answer of ``answerNow(_:body:engine:)``.
    enum NowAnswer {
        /// The status and JSON body, computed (and a mutation committed) on the caller's thread.
        case answer(HTTPResponse.Status, String)
        /// A mutation to queue on `writes`, the engine's ``WriteQueue``; `json` turns its outcome into the
        /// answer's body (status 200).
        case queued(
            writes: WriteQueue, mutation: ModelStore.Mutation,
            json: @Sendable (Result<GQLValues, any Error>) -> String)
    }

    /// The answer to a POST holding one query or mutation that a compiled plan runs, computed and committed on
    /// the caller's thread (or its mutation handed back to queue, when the writer is busy), or to one whose
    /// document is refused (unparsable, invalid, over a limit: nothing runs); `nil` for every other request
    /// (wrong credentials, a batch, an operation for the executor), which then goes through the router and
    /// ``post(_:)`` as if this had not been asked.
    /// Nothing is read or written before the answer is certain to come from here.
    func answerNow(_ head: HTTPRequest, body: ByteBuffer, engine: DevEngine) -> NowAnswer? {
        answerNow(
            DevAuthenticator.Credentials(headers: head.headerFields), body: Array(body.readableBytesView),
            idempotencyKey: IdempotencyLedger.key(in: head.headerFields), engine: engine)
    }

    /// ``answerNow(_:body:engine:)`` for a request whose credentials and `Idempotency-Key` were read from its
    /// headers by the caller.
    func answerNow(
        _ credentials: DevAuthenticator.Credentials, body: [UInt8], idempotencyKey: String?, engine: DevEngine
    ) -> NowAnswer? {
        guard case .success = authenticator.check(credentials),
            case .success(.single(let request)) = HTTPRequestDecoder.decodeBody(body)
        else { return nil }
        let answer: (status: HTTPResponse.Status, json: String)
        switch engine.prepare(request) {
        case .failure(let refusal):
            // Answered here as ``post(_:)`` answers it, so a refused document is not scanned a second time.
            answer = (refusal.reason == .limit ? .badRequest : .ok, ResponseJSON.text(refusal.response(.standard)))
        case .success(let prepared):
            guard prepared.kind != .subscription, let plan = prepared.plan, prepared.cost <= limits.maxCost else {
                return nil
            }
            var ticket: IdempotencyLedger.Ticket?
            if prepared.kind == .mutation, let key = idempotencyKey, idempotency.isEnabled {
                switch begin(key, credentials, body: body, [request], batch: false) {
                case .run(let allowed): ticket = allowed
                case .answer(let status, let json): return .answer(status, json)
                }
            }
            guard
                let outcome = engine.runNow(
                    plan, prepared, formatter: ResponseFormatter(style: .standard),
                    budget: ResponseBudget(limit: limits.maxResponseBytes))
            else {
                if let ticket { idempotency.release(ticket) }  // the router's path runs it, under the key again
                return nil
            }
            switch outcome {
            case .response(let response):
                answer = (.ok, response.json)
                if let ticket { idempotency.complete(ticket, answer: response.json) }
            case .queued(let writes, let mutation, let response):
                logger.info("POST \(request.operationName ?? "anonymous") → queued for a group commit")
                let (idempotency, ticket) = (idempotency, ticket)
                return .queued(writes: writes, mutation: mutation) { result in
                    let json = response(result).json
                    if let ticket { idempotency.complete(ticket, answer: json) }
                    return json
                }
            }
        }
        logger.info(
            "POST \(request.operationName ?? "anonymous") → \(answer.status.code) (answered on the event loop)")
        return .answer(answer.status, answer.json)
    }
}
