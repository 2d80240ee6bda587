import AsyncHTTPClient
import Foundation
import GQLCore
import GQLHTTP

extension GQLServer {
    /// Posts a JSON body and returns the answer as JSON, after checking status, size and syntax.
    ///
    /// - Parameter operation: `query`, `mutation` or `batch`, as errors name it.
    /// - Throws: ``GQLError`` `.http`, `.invalidResponse`, `.responseTooLarge`, `.timeout`, `.cancelled`, `.io`,
    ///   `.invalidArgument` (a URL AsyncHTTPClient cannot use).
    func send(_ body: GQLValue, headers callHeaders: [String: String], operation: String) async throws -> GQLValue {
        try await send(headers: callHeaders, operation: operation) { .bytes(try body.jsonData()) }
    }

    /// Runs a mutation whose request body is JSON already (`{"query": …, "variables": …}` as bytes) over HTTP,
    /// for a caller that keeps its variables as JSON text (GQLSync's outbox) and would otherwise parse them and
    /// encode them again for every request. The body is sent as given: the caller answers for it being JSON.
    ///
    /// - Throws: what ``mutation(_:_:headers:)`` throws; `.invalidArgument` on a server without an HTTP endpoint.
    package func mutation(jsonBody: [UInt8], headers: [String: String] = [:]) async throws -> GQLResult {
        try GQLResult(response: await send(headers: headers, operation: "mutation") { .bytes(jsonBody) })
    }

    /// ``send(_:headers:operation:)`` with the body made by `body`, once the endpoint and headers are checked.
    private func send(
        headers callHeaders: [String: String], operation: String, body: () throws -> HTTPClientRequest.Body
    ) async throws -> GQLValue {
        guard let url else {
            throw GQLError(.invalidArgument, "this server has no HTTP endpoint", operation: operation)
        }
        try HeaderCheck.validate(headers, operation: operation)
        try HeaderCheck.validate(callHeaders, operation: operation)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/graphql-response+json, application/json")
        if configuration.acceptsCompression { request.headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        for (name, value) in headers where !callHeaders.keys.contains(where: { $0.lowercased() == name.lowercased() }) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        for (name, value) in callHeaders { request.headers.replaceOrAdd(name: name, value: value) }
        request.body = try body()
        // A per-call Authorization header is the caller's choice for this request: the provider is not asked.
        let provider = callHeaders.keys.contains { $0.lowercased() == "authorization" } ? nil : authorization
        var sent: String?
        if let provider {
            sent = try await Self.authorizationValue(from: provider, .init(transport: .http), operation: operation)
            if let sent { request.headers.replaceOrAdd(name: "Authorization", value: sent) }
        }

        let started = ContinuousClock.now
        var (status, contentType, bytes, retryAfter, answerHeaders) = try await exchange(request, operation: operation)
        if status == 401, let provider {
            // One retry with a fresh value (AutoGraph's AuthHandler idea); a provider offering the refused value
            // again, or none, leaves the 401 to the caller.
            let retry = AuthorizationRequest(transport: .http, isRetry: true, rejected: sent)
            if let fresh = try await Self.authorizationValue(from: provider, retry, operation: operation),
                fresh != sent
            {
                log.debug("GraphQL \(operation) got 401: retrying once with a fresh authorization")
                request.headers.replaceOrAdd(name: "Authorization", value: fresh)
                (status, contentType, bytes, retryAfter, answerHeaders) = try await exchange(
                    request, operation: operation)
            }
        }
        log.debug(
            "GraphQL \(operation) answered",
            metadata: [
                "url": "\(target)", "status": "\(status)",
                "duration": "\(ContinuousClock.now - started)", "bytes": "\(bytes.count)",
            ])
        if let observe = Self.answerHeaders { observe(answerHeaders) }
        return try answer(
            status: status, contentType: contentType, body: bytes, operation: operation,
            retryAfter: retryAfter.flatMap { RetryAfter.duration($0, now: Date()) })
    }

    /// The JSON of an answer, or the error its status or body calls for.
    ///
    /// A 4xx answer in `application/graphql-response+json` with `errors` is a GraphQL response (GraphQL over HTTP
    /// answers parse and validation errors that way) and is returned like a 200 one.
    ///
    /// `retryAfter` (the answer's `Retry-After`, read) rides on the error of a 429 or 503 answer.
    func answer(
        status: Int, contentType: String? = nil, body bytes: Data, operation: String, retryAfter: Duration? = nil
    ) throws -> GQLValue {
        if (400..<500).contains(status), Self.isResult(status: status, contentType: contentType),
            let value = try? GQLValue(json: bytes), value["errors"] != nil
        {
            return value
        }
        guard (200..<300).contains(status) else {
            var error = GQLError(
                .http, "HTTP \(status) from \(target): \(excerpt(bytes))", operation: operation, httpStatus: status)
            if status == 429 || status == 503 { error.retryAfter = retryAfter }
            throw error
        }
        do {
            return try GQLValue(json: bytes)
        } catch {
            let what = bytes.isEmpty ? "an empty body" : "a body that is not JSON: \(excerpt(bytes))"
            throw GQLError(
                .invalidResponse, "HTTP \(status) from \(target) with \(what)", operation: operation,
                httpStatus: status)
        }
    }

    /// Runs the request and collects the answer through the shared ``HTTPExchange``: redirects refused, status,
    /// size limit and transport failures as ``GQLError``s.
    ///
    /// ``Configuration/timeout`` bounds the whole exchange, head and body. The body of an answer that is not a
    /// GraphQL result (see ``isResult(status:contentType:)``) is read only for the error's excerpt, up to 64 KiB.
    private func exchange(_ request: HTTPClientRequest, operation: String) async throws
        -> (Int, String?, Data, String?, [(name: String, value: String)])
    {
        let response = try await http.collect(request, target: target, operation: operation) { status, headers in
            Self.isResult(status: status, contentType: headers.first(name: "Content-Type"))
        }
        // The header fields are copied out only for a caller that observes them (``answerHeaders``).
        let fields = Self.answerHeaders == nil ? [] : response.headers.map { (name: $0.name, value: $0.value) }
        return (
            response.status, response.headers.first(name: "Content-Type"), response.body,
            response.headers.first(name: "Retry-After"), fields
        )
    }

    /// Whether an answer's body is a GraphQL result (read whole): a 2xx, or a 4xx in
    /// `application/graphql-response+json` (GraphQL over HTTP answers parse and validation errors that way).
    static func isResult(status: Int, contentType: String?) -> Bool {
        (200..<300).contains(status)
            || ((400..<500).contains(status)
                && contentType?.lowercased().hasPrefix("application/graphql-response+json") == true)
    }

    /// The start of a body, as error messages quote it.
    func excerpt(_ bytes: some Collection<UInt8>) -> String { http.excerpt(bytes) }

    /// The shared HTTP layer with this server's client and limits.
    var http: HTTPExchange {
        var limits = HTTPExchange.Limits()
        limits.timeout = configuration.timeout
        limits.maximumResponseSize = configuration.maximumResponseSize
        limits.errorBodyExcerptLength = configuration.errorBodyExcerptLength
        return HTTPExchange(client: client, limits: limits)
    }

    /// A URL without its query string or user info, which may carry credentials.
    package static func loggable(_ url: String) -> String { HTTPExchange.loggable(url) }
}
