import AsyncHTTPClient
import Foundation
import GQLCore
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix

/// The HTTP layer every web-service client of the toolkit shares (GraphQL over HTTP, S3, Auth0, OneSignal, REST):
/// one request and its answer over an AsyncHTTPClient made by ``makeClient(timeout:connectTimeout:decompression:sharing:)``,
/// with the redirect policy, the deadlines, the size limits, error excerpts and transport failures handled once.
///
/// The policy, for every client:
/// - Redirects are never followed: a 3xx answer with a `Location` is refused with ``GQLError/Code/redirect``,
///   naming the target without its query or user info, before its body is read. Requests carry credentials
///   (API keys, signatures, passwords in form bodies) that must not reach another origin.
/// - ``collect(_:target:operation:deadline:isResult:)`` holds the answer's head and its whole body to one deadline
///   (``Limits/timeout``), checked as each chunk arrives; a body that stops arriving ends at the read timeout of the
///   same length, so a call never outlives its deadline by more than one timeout. ``stream(_:target:operation:read:)``,
///   for transfers of any length, bounds the head by the deadline and each stall of the body by the read timeout,
///   never the transfer's length.
/// - A body read only for an error message stops at ``Limits/errorBodyLimit`` bytes and the connection is closed,
///   not drained.
///
/// It never logs or quotes headers or request bodies: they may hold credentials. Error messages name the target
/// without its query string or user info.
package struct HTTPExchange: Sendable {
    /// Limits of one exchange.
    package struct Limits: Sendable {
        /// The longest a collected exchange may take, head and body; for a stream, the longest the head may take
        /// and the body may stall.
        package var timeout: Duration = .seconds(30)
        /// The largest body ``collect(_:target:operation:deadline:isResult:)`` accepts.
        package var maximumResponseSize = 1 << 24
        /// How many characters of a failed answer an error quotes.
        package var errorBodyExcerptLength = 512
        /// The most bytes read of a body that is only read for an error message; the rest is not read and the
        /// connection is closed.
        package var errorBodyLimit = 64 << 10

        package init() {}
    }

    /// How long a collected answer may take.
    package enum Deadline: Sendable {
        /// Head and body within ``Limits/timeout``: answers of a known, small size. The head is bounded by
        /// AsyncHTTPClient's deadline, the body by a check of the clock as each chunk arrives and, when it stops
        /// arriving, by the client's read timeout (the same length): a call ends at most one timeout past its
        /// deadline, whatever the server does.
        case overall
        /// The head within ``Limits/timeout``, then no stall of the body longer than the client's read timeout:
        /// large transfers that may take as long as they keep moving.
        case stallOnly
    }

    /// A collected answer.
    package struct Response: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: Data
        /// Whether the body was cut at ``Limits/errorBodyLimit`` (an answer that is not a result).
        package var isTruncated = false

        package var isSuccess: Bool { (200..<300).contains(status) }

        package init(status: Int, headers: HTTPHeaders, body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// The client requests go through, owned by the service the exchange serves.
    package let owner: OwnedHTTPClient
    package var limits: Limits

    package var client: HTTPClient { owner.client }

    package init(client owner: OwnedHTTPClient, limits: Limits = .init()) {
        self.owner = owner
        self.limits = limits
    }

    /// Sends `request` and collects its answer, whatever the status.
    ///
    /// - Parameters:
    ///   - target: the URL as errors name it (see ``loggable(_:)``).
    ///   - operation: the verb errors name (`upload`, `signIn` …).
    ///   - isResult: whether an answer with this status and these headers is the result (read whole, up to
    ///     ``Limits/maximumResponseSize``); any other is read only for an error message, up to
    ///     ``Limits/errorBodyLimit``. Default: a 2xx status.
    /// - Throws: ``GQLError`` `.redirect`, `.responseTooLarge`, `.timeout`, `.cancelled`, `.connection`, `.io`,
    ///   `.invalidArgument`.
    package func collect(
        _ request: HTTPClientRequest, target: String, operation: String, deadline: Deadline = .overall,
        isResult: @escaping @Sendable (Int, HTTPHeaders) -> Bool = { status, _ in (200..<300).contains(status) }
    ) async throws -> Response {
        let ends = deadline == .overall ? ContinuousClock.now + limits.timeout : nil
        return try await stream(request, target: target, operation: operation) { status, headers, body in
            guard isResult(status, headers) else {
                var response = Response(status: status, headers: headers, body: Data())
                (response.body, response.isTruncated) = try await readErrorBody(body)
                return response
            }
            let result = try await readResult(body, status, headers, target, operation, until: ends)
            return Response(status: status, headers: headers, body: result)
        }
    }

    /// Sends `request` and hands the answer's status, headers and body to `read`, which consumes as much of the
    /// body as it wants (a body left unread closes the connection). The head must arrive within
    /// ``Limits/timeout``; the body has no overall deadline, only the client's read timeout for each stall.
    ///
    /// - Throws: ``GQLError`` `.redirect` for a redirect (before `read` is called), and the transport errors.
    package func stream<T: Sendable>(
        _ request: HTTPClientRequest, target: String, operation: String,
        read: (Int, HTTPHeaders, Body) async throws -> T
    ) async throws -> T {
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(limits.timeout.nanoseconds))
            if let refusal = Self.redirectRefusal(response, request: request, target: target, operation: operation) {
                throw refusal
            }
            return try await read(Int(response.status.code), response.headers, Body(response.body))
        } catch let error as GQLError {
            throw error
        } catch {
            throw Self.transportError(
                error, target: target, operation: operation, decompressionLimit: limits.maximumResponseSize)
        }
    }

    /// A response body as chunks.
    package struct Body: AsyncSequence, Sendable {
        package typealias Element = ByteBuffer
        let body: HTTPClientResponse.Body

        init(_ body: HTTPClientResponse.Body) { self.body = body }

        package func makeAsyncIterator() -> HTTPClientResponse.Body.AsyncIterator { body.makeAsyncIterator() }
    }

    /// The start of a body read only for an error message: at most ``Limits/errorBodyLimit`` bytes, and whether
    /// there was more. What is left is not read: the connection closes when the body is dropped.
    package func readErrorBody(_ body: Body) async throws -> (Data, truncated: Bool) {
        let limit = limits.errorBodyLimit
        // A refusal's body that trickles in (a byte now and then, each within the read timeout) is read for at most
        // the timeout: its message is what came by then.
        let deadline = ContinuousClock.now + limits.timeout
        var data = Data()
        for try await chunk in body {
            let room = limit - data.count
            data.append(contentsOf: chunk.readableBytesView.prefix(room))
            if chunk.readableBytes > room || ContinuousClock.now >= deadline { return (data, true) }
        }
        return (data, false)
    }

    /// The whole body of a result, up to ``Limits/maximumResponseSize``, arriving before `deadline` when one is
    /// given: a chunk that arrives after it ends the read with `.timeout` (a body that stops arriving is ended by the
    /// client's read timeout). A clock check per chunk, not a timer task racing each request (Docs/Performance.md
    /// has what that race costs).
    private func readResult(
        _ body: Body, _ status: Int, _ headers: HTTPHeaders, _ target: String, _ operation: String,
        until deadline: ContinuousClock.Instant?
    ) async throws -> Data {
        let limit = limits.maximumResponseSize
        func tooLarge() -> GQLError {
            GQLError(
                .responseTooLarge, "the answer from \(target) is larger than the \(limit)-byte maximum",
                operation: operation, httpStatus: status)
        }
        if let length = headers.first(name: "Content-Length").flatMap(Int.init), length > limit { throw tooLarge() }
        var data = Data()
        for try await chunk in body {
            guard data.count + chunk.readableBytes <= limit else { throw tooLarge() }
            if let deadline, ContinuousClock.now >= deadline {
                throw GQLError(
                    .timeout,
                    "the \(operation) to \(target) timed out: the answer was still arriving after \(limits.timeout)",
                    operation: operation, httpStatus: status)
            }
            data.append(contentsOf: chunk.readableBytesView)
        }
        return data
    }

    /// The start of a body, as error messages quote it.
    package func excerpt(_ bytes: some Collection<UInt8>) -> String {
        let limit = limits.errorBodyExcerptLength
        let text = String(decoding: bytes.prefix(limit), as: UTF8.self)
        return bytes.count > limit ? text + "…" : text
    }

    /// The ``GQLError`` for a failure below HTTP: timeout, cancellation, bad URL, refused or lost connection, a
    /// compressed answer that inflates past `decompressionLimit` bytes.
    package static func transportError(
        _ error: any Error, target: String, operation: String, decompressionLimit: Int? = nil
    ) -> GQLError {
        if error is CancellationError || (error as? HTTPClientError) == .cancelled || Task.isCancelled {
            return GQLError(.cancelled, "the \(operation) to \(target) was cancelled", operation: operation)
        }
        if let error = error as? NIOHTTPDecompression.DecompressionError {
            guard error == .limit else {
                return GQLError(
                    .invalidResponse, "the answer from \(target) could not be decompressed (\(error))",
                    operation: operation)
            }
            let limit = decompressionLimit.map { "the \($0)-byte maximum" } ?? "the maximum"
            return GQLError(
                .responseTooLarge, "the answer from \(target) is larger than \(limit) once decompressed",
                operation: operation)
        }
        // A refused, reset or closed connection (a server may close after answering an error early, before reading
        // the whole body): retrying on a new connection may help.
        if error is NIOConnectionError || error is IOError || error is ChannelError {
            return GQLError(
                .connection, "the \(operation) to \(target) failed: \(describeConnectError(error))",
                operation: operation)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout, .getConnectionFromPoolTimeout:
                return GQLError(.timeout, "the \(operation) to \(target) timed out (\(error))", operation: operation)
            case .invalidURL, .emptyHost, .emptyScheme:
                return GQLError(
                    .invalidArgument, "'\(target)' is not a usable HTTP URL (\(error))", operation: operation)
            case .alreadyShutdown:
                return GQLError(.closed, "the server was shut down", operation: operation)
            case .remoteConnectionClosed:
                return GQLError(
                    .connection, "the \(operation) to \(target) failed: the server closed the connection",
                    operation: operation)
            default:
                // AsyncHTTPClient's full description quotes what it refused (a header value with a line break: a
                // session token read from a file with CR LF); its short one names only the kind.
                return GQLError(
                    .io, "the \(operation) to \(target) failed: \(error.shortDescription)", operation: operation)
            }
        }
        return GQLError(.io, "the \(operation) to \(target) failed: \(error)", operation: operation)
    }

    /// A URL without its query string, fragment or user info, which may carry credentials.
    package static func loggable(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "<unparsable URL>" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "<unparsable URL>"
    }
}
