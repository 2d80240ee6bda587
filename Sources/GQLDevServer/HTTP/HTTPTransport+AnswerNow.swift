import GQLCore
import HTTPTypes
import NIOCore

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
        /// The status and the JSON body's bytes, computed (and a mutation committed) on the caller's thread.
        case answer(HTTPResponse.Status, [UInt8])
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
            let request = HTTPRequestDecoder.singleRequest(body)
        else { return nil }
        let operationName = request.operationName
        let answer: (status: HTTPResponse.Status, json: [UInt8])
        // The request's last use: it moves into the prepared request, which this function then holds alone.
        do throws(DevEngine.Refusal) {
            let prepared = try engine.prepared(request)
            guard prepared.kind != .subscription, let plan = prepared.plan, prepared.cost <= limits.maxCost else {
                return nil
            }
            var ticket: IdempotencyLedger.Ticket?
            if prepared.kind == .mutation, let key = idempotencyKey, idempotency.isEnabled {
                switch begin(key, credentials, body: body, [prepared.request], batch: false) {
                case .run(let allowed): ticket = allowed
                case .answer(let status, let json): return .answer(status, Array(json.utf8))
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
                answer = (.ok, response.utf8)  // the bytes as written, made no `String`
                if let ticket { idempotency.complete(ticket, answer: response.text) }
            case .queued(let writes, let mutation, let response):
                logger.info("POST \(operationName ?? "anonymous") → queued for a group commit")
                let (idempotency, ticket) = (idempotency, ticket)
                return .queued(writes: writes, mutation: mutation) { result in
                    let json = response(result).json
                    if let ticket { idempotency.complete(ticket, answer: json) }
                    return json
                }
            }
        } catch {
            // Answered here as ``post(_:)`` answers it, so a refused document is not scanned a second time.
            let json = ResponseJSON.text(error.response(.standard))
            answer = (error.reason == .limit ? .badRequest : .ok, Array(json.utf8))
        }
        logger.info(
            "POST \(operationName ?? "anonymous") → \(answer.status.code) (answered on the event loop)")
        return .answer(answer.status, answer.json)
    }
}
