import AsyncHTTPClient
import Foundation
import GQLCore
import NIOCore
import NIOHTTPCompression
import NIOPosix

extension GQLServer {
    /// Posts a JSON body and returns the answer as JSON, after checking status, size and syntax.
    ///
    /// - Parameter operation: `query`, `mutation` or `batch`, as errors name it.
    /// - Throws: ``GQLError`` `.http`, `.invalidResponse`, `.responseTooLarge`, `.timeout`, `.cancelled`, `.io`,
    ///   `.invalidArgument` (a URL AsyncHTTPClient cannot use).
    func send(_ body: GQLValue, headers callHeaders: [String: String], operation: String) async throws -> GQLValue {
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
        request.body = .bytes(try body.jsonData())

        let started = ContinuousClock.now
        let (status, contentType, bytes) = try await exchange(request, operation: operation)
        log.debug(
            "GraphQL \(operation) answered",
            metadata: [
                "url": "\(target)", "status": "\(status)",
                "duration": "\(ContinuousClock.now - started)", "bytes": "\(bytes.count)",
            ])
        return try answer(status: status, contentType: contentType, body: bytes, operation: operation)
    }

    /// The JSON of an answer, or the error its status or body calls for.
    ///
    /// A 4xx answer in `application/graphql-response+json` with `errors` is a GraphQL response (GraphQL over HTTP
    /// answers parse and validation errors that way) and is returned like a 200 one.
    func answer(status: Int, contentType: String? = nil, body bytes: Data, operation: String) throws -> GQLValue {
        if (400..<500).contains(status),
            contentType?.lowercased().hasPrefix("application/graphql-response+json") == true,
            let value = try? GQLValue(json: bytes), value["errors"] != nil
        {
            return value
        }
        guard (200..<300).contains(status) else {
            throw GQLError(
                .http, "HTTP \(status) from \(target): \(excerpt(bytes))", operation: operation,
                httpStatus: status)
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

    /// Runs the request and collects the answer, turning AsyncHTTPClient's failures into ``GQLError``s.
    ///
    /// ``Configuration/timeout`` bounds the wait for the response head (AsyncHTTPClient's deadline) and every
    /// stall of the body (its read timeout); a body still arriving after the deadline is stopped at its next chunk.
    /// No timer task runs per request.
    private func exchange(_ request: HTTPClientRequest, operation: String) async throws -> (Int, String?, Data) {
        let limit = configuration.maximumResponseSize
        let deadline = ContinuousClock.now + configuration.timeout
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(configuration.timeout.nanoseconds))
            let status = Int(response.status.code)
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                throw tooLarge(limit, operation: operation, status: status)
            }
            var body = Data()
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= limit else {
                    throw tooLarge(limit, operation: operation, status: status)
                }
                guard ContinuousClock.now < deadline else { throw HTTPClientError.deadlineExceeded }
                body.append(contentsOf: chunk.readableBytesView)
            }
            return (status, response.headers.first(name: "Content-Type"), body)
        } catch let error as GQLError {
            throw error
        } catch {
            throw transportError(error, operation: operation)
        }
    }

    private func tooLarge(_ limit: Int, operation: String, status: Int) -> GQLError {
        GQLError(
            .responseTooLarge, "the answer from \(target) is larger than the \(limit)-byte maximum",
            operation: operation, httpStatus: status)
    }

    /// The ``GQLError`` for a failure below HTTP: timeout, cancellation, bad URL, unreachable server.
    func transportError(_ error: any Error, operation: String) -> GQLError {
        if error is CancellationError || (error as? HTTPClientError) == .cancelled || Task.isCancelled {
            return GQLError(.cancelled, "the \(operation) to \(target) was cancelled", operation: operation)
        }
        if let error = error as? NIOHTTPDecompression.DecompressionError {
            // A compressed answer that inflates past the limit (NIO's decompression limit), or is corrupt.
            guard error == .limit else {
                return GQLError(
                    .invalidResponse, "the answer from \(target) could not be decompressed (\(error))",
                    operation: operation)
            }
            return GQLError(
                .responseTooLarge,
                "the answer from \(target) is larger than the \(configuration.maximumResponseSize)-byte maximum "
                    + "once decompressed", operation: operation)
        }
        if error is NIOConnectionError || error is IOError {
            return GQLError(
                .connection, "the \(operation) to \(target) failed: \(describeConnectError(error))",
                operation: operation)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
                return GQLError(
                    .timeout, "the \(operation) to \(target) timed out (\(error))", operation: operation)
            case .invalidURL, .emptyHost, .emptyScheme:
                return GQLError(
                    .invalidArgument, "'\(target)' is not a usable HTTP URL (\(error))", operation: operation)
            case .alreadyShutdown:
                return GQLError(.closed, "the server was shut down", operation: operation)
            default: break
            }
        }
        return GQLError(.io, "the \(operation) to \(target) failed: \(error)", operation: operation)
    }

    /// The start of a body, as error messages quote it.
    func excerpt(_ bytes: some Collection<UInt8>) -> String {
        let limit = configuration.errorBodyExcerptLength
        let text = String(decoding: bytes.prefix(limit), as: UTF8.self)
        return bytes.count > limit ? text + "…" : text
    }

    /// The endpoint as messages name it: the HTTP URL, or the WebSocket URL of a WebSocket-only server.
    var target: String { Self.loggable(url ?? webSocketURL ?? "") }

    /// A URL without its query string or user info, which may carry credentials.
    package static func loggable(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "<unparsable URL>" }
        components.query = nil
        components.user = nil
        components.password = nil
        return components.string ?? "<unparsable URL>"
    }
}
