import Foundation
import GQLCore
import Hummingbird
import Logging

/// Serves GraphQL over HTTP: POST with a JSON body (one request or a batch), GET with query parameters.
///
/// Status codes: 200 for every executed request, GraphQL errors included; 400 for a malformed request;
/// 401 for missing or wrong credentials; 405 for a mutation over GET; 413 for a body over
/// ``GQLDevServer/Configuration/maxBodyBytes``; 500 for POSTs failed by fault injection; for a mutation sent with an
/// `Idempotency-Key`, 400, 409 and 422 as ``IdempotencyLedger`` decides. Every body is JSON.
struct HTTPTransport: Sendable {
    let engine: any DevExecutor
    let authenticator: DevAuthenticator
    let faults: FaultInjector
    let maxBodyBytes: Int
    let limits: GQLDevServer.Limits
    /// The GraphQL endpoint's path (``GQLDevServer/Configuration/path``).
    let path: String
    /// The answers of mutations sent with an `Idempotency-Key`.
    let idempotency: IdempotencyLedger
    let logger: Logger

    func post(_ request: Request) async -> Response {
        var request = request
        await faults.delay()
        let credentials = DevAuthenticator.Credentials(headers: request.headers)
        if case .failure(let refusal) = authenticator.check(credentials) {
            return unauthorized(refusal)
        }
        if faults.shouldFailPOST() {
            logger.debug("GQLDevServer fails a POST with 500 (fault injection)")
            return Self.error(.internalServerError, "Injected fault: the server failed this request on purpose.")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            return Self.tooLarge(maxBodyBytes)
        }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBodyBytes)
        } catch let error as HTTPResponseError where error.status == .contentTooLarge {
            return Self.tooLarge(maxBodyBytes)
        } catch {
            return Self.error(.badRequest, "The body could not be read: \(error)")
        }
        let bytes = Array(body.readableBytesView)
        let key = IdempotencyLedger.key(in: request.headers).map {
            Idempotent(key: $0, credentials: credentials, body: bytes)
        }
        switch HTTPRequestDecoder.decodeBody(bytes) {
        case .failure(let failure):
            return Self.error(.badRequest, failure.message)
        case .success(.single(let graphQLRequest)):
            let owner = authenticator.owner(credentials)
            return await run([graphQLRequest.owned(by: owner)], batch: false, overGET: false, idempotent: key)
        case .success(.batch(let requests)):
            guard requests.count <= limits.maxBatchOperations else {
                let limit = limits.maxBatchOperations
                return Self.refused(
                    LimitExceeded(
                        .batch, "The batch holds \(requests.count) operations; the limit is \(limit).", limit: limit))
            }
            let owner = authenticator.owner(credentials)
            return await run(requests.map { $0.owned(by: owner) }, batch: true, overGET: false, idempotent: key)
        }
    }

    func get(_ request: Request) async -> Response {
        await faults.delay()
        let credentials = DevAuthenticator.Credentials(headers: request.headers)
        if case .failure(let refusal) = authenticator.check(credentials) {
            return unauthorized(refusal)
        }
        let parameters = HTTPRequestDecoder.formParameters(request.uri.query)
        let decoded = HTTPRequestDecoder.decodeQuery(
            query: parameters["query"], variables: parameters["variables"], operationName: parameters["operationName"])
        switch decoded {
        case .failure(let failure): return Self.error(.badRequest, failure.message)
        case .success(let graphQLRequest):
            return await run([graphQLRequest.owned(by: authenticator.owner(credentials))], batch: false, overGET: true)
        }
    }

    /// Prepares every request before running any, so a request or batch over a limit runs nothing (HTTP 400),
    /// then runs them in order with one response budget: queries and mutations; subscriptions get a GraphQL error.
    private func run(
        _ requests: [DevEngine.Request], batch: Bool, overGET: Bool, idempotent: Idempotent? = nil
    ) async -> Response {
        let response = await answer(requests, batch: batch, overGET: overGET, idempotent: idempotent)
        logger.info(
            "\(overGET ? "GET" : "POST") \(Self.describe(requests, batch: batch)) → \(response.status.code)")
        return response
    }

    /// The operation names (or `anonymous`) of `requests`, for the log; never variables or credentials.
    private static func describe(_ requests: [DevEngine.Request], batch: Bool) -> String {
        let names = requests.prefix(5).map { $0.operationName ?? "anonymous" }.joined(separator: ", ")
        return batch ? "batch of \(requests.count) [\(names)\(requests.count > 5 ? ", …" : "")]" : names
    }

    /// A POST's `Idempotency-Key`, with what it is checked against.
    struct Idempotent {
        var key: String
        var credentials: DevAuthenticator.Credentials
        var body: [UInt8]
    }

    private func answer(
        _ requests: [DevEngine.Request], batch: Bool, overGET: Bool, idempotent: Idempotent?
    ) async -> Response {
        let outcomes = requests.map(engine.prepare)
        var cost = 0
        for outcome in outcomes {
            switch outcome {
            case .failure(let refusal) where refusal.reason == .limit:
                return Self.json(.badRequest, refusal.response(.standard))
            case .failure:
                break
            case .success(let prepared):
                if overGET, prepared.kind == .mutation {
                    var response = Self.error(.methodNotAllowed, "Mutations must be sent with POST.")
                    response.headers[.allow] = "POST"
                    return response
                }
                cost = DocumentLimits.sum(cost, prepared.cost)
            }
        }
        if cost > limits.maxCost {
            return Self.refused(DevEngine.costExceeded(cost, limit: limits.maxCost))
        }
        // A request that mutates, sent with a key: answered once, repeats get that answer.
        var ticket: IdempotencyLedger.Ticket?
        if let idempotent, idempotency.isEnabled, outcomes.contains(where: { (try? $0.get().kind) == .mutation }) {
            switch begin(idempotent.key, idempotent.credentials, body: idempotent.body, requests, batch: batch) {
            case .run(let allowed): ticket = allowed
            case .answer(let status, let json): return Self.json(status, text: json)
            }
        }
        let budget = ResponseBudget(limit: limits.maxResponseBytes)
        var responses: [String] = []
        // A batch's consecutive planned mutations are queued together, so they commit in one group, each in
        // order with its own checks; anything else waits until they have answered, so it sees their writes.
        var queued: [(index: Int, answer: QueuedAnswer)] = []
        func settle() async {
            for (index, answer) in queued { responses[index] = await answer.json() }
            queued.removeAll()
        }
        for outcome in outcomes {
            if batch, case .success(let prepared) = outcome, let answer = queue(prepared, budget: budget) {
                queued.append((responses.count, answer))
                responses.append("")
                continue
            }
            await settle()
            switch outcome {
            case .failure(let refusal):
                responses.append(ResponseJSON.text(refusal.response(.standard)))
            case .success(let prepared) where prepared.kind == .subscription:
                let message = "Subscriptions are served over WebSocket (graphql-transport-ws, graphql-ws or AppSync)."
                responses.append(ResponseJSON.text(["errors": [["message": .string(message)]]]))
            case .success(let prepared):
                responses.append(await engine.execute(prepared, style: .standard, budget: budget).json)
            }
        }
        await settle()
        let text = batch ? "[" + responses.joined(separator: ",") + "]" : responses[0]
        if let ticket { idempotency.complete(ticket, answer: text) }
        return Self.json(.ok, text: text)
    }

    /// A planned operation with one mutation, its mutation queued on the engine's write queue without waiting;
    /// `nil` (nothing queued or written) for any other operation.
    private func queue(_ prepared: DevEngine.Prepared, budget: ResponseBudget) -> QueuedAnswer? {
        guard let engine = engine as? DevEngine, prepared.kind == .mutation, let plan = prepared.plan,
            let outcome = engine.runNow(
                plan, prepared, formatter: ResponseFormatter(style: .standard), budget: budget, commitHere: false)
        else { return nil }
        switch outcome {
        case .response(let response):
            return QueuedAnswer(ready: response.text)  // refused before any write (its input, say)
        case .queued(let writes, let mutation, let response):
            let answer = QueuedAnswer()
            writes.submit(mutation) { answer.fulfil(response($0).json) }
            return answer
        }
    }

    /// HTTP 400 with the limit's GraphQL error.
    static func refused(_ limit: LimitExceeded) -> Response {
        json(.badRequest, ResponseFormatter(style: .standard).response(errors: [limit.graphQLError()]))
    }

    /// 401 with the refusal's reason; where tokens are checked, also `extensions.code` `UNAUTHENTICATED` and
    /// `WWW-Authenticate: Bearer`.
    func unauthorized(_ refusal: DevAuthenticator.Refusal) -> Response {
        guard authenticator.tokens != nil else { return Self.error(.unauthorized, "Unauthorized: \(refusal.reason)") }
        var response = Self.error(.unauthorized, "Unauthorized: \(refusal.reason)", code: "UNAUTHENTICATED")
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// 413, and the connection ends: the rest of the body is not worth reading.
    static func tooLarge(_ limit: Int) -> Response {
        var response = error(.contentTooLarge, "The request body is larger than \(limit) bytes.")
        response.headers[.connection] = "close"
        return response
    }

    /// A JSON error body in GraphQL's shape, with the HTTP status as `extensions.status`.
    static func error(_ status: HTTPResponse.Status, _ message: String, code: String? = nil) -> Response {
        json(status, text: errorText(status, message, code: code))
    }

    /// The body of ``error(_:_:code:)``.
    static func errorText(_ status: HTTPResponse.Status, _ message: String, code: String? = nil) -> String {
        var extensions: GQLValues = ["status": .int(Int64(status.code))]
        if let code { extensions["code"] = .string(code) }
        return ResponseJSON.text(["errors": [["message": .string(message), "extensions": .object(extensions)]]])
    }

    static func json(_ status: HTTPResponse.Status, _ value: GQLValue) -> Response {
        json(status, text: ResponseJSON.text(value))
    }

    /// A response whose body is the JSON `text`.
    static func json(_ status: HTTPResponse.Status, text: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}
