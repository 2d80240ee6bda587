import AsyncHTTPClient
import Foundation
import GQLCore
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix

/// The HTTP layer every web-service client of the toolkit shares (S3, Auth0, OneSignal, REST): one request and
/// its answer over an injectable, shared AsyncHTTPClient, with the deadline, the size limit, error excerpts and
/// transport failures handled once.
///
/// It never logs or quotes headers or request bodies: they may hold credentials. Error messages name the target
/// without its query string or user info.
package struct HTTPExchange: Sendable {
    /// Limits of one exchange.
    package struct Limits: Sendable {
        /// The longest the response head may take, and the longest the body may stall.
        package var timeout: Duration = .seconds(30)
        /// The largest body ``collect(_:target:operation:)`` accepts.
        package var maximumResponseSize = 1 << 24
        /// How many characters of a failed answer an error quotes.
        package var errorBodyExcerptLength = 512

        package init() {}
    }

    /// A collected answer.
    package struct Response: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: Data

        package var isSuccess: Bool { (200..<300).contains(status) }

        package init(status: Int, headers: HTTPHeaders, body: Data) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    package let client: HTTPClient
    package var limits: Limits

    package init(client: HTTPClient, limits: Limits = .init()) {
        self.client = client
        self.limits = limits
    }

    /// Sends `request` and collects its answer, whatever the status.
    ///
    /// - Parameters:
    ///   - target: the URL as errors name it (see ``loggable(_:)``).
    ///   - operation: the verb errors name (`upload`, `signIn` …).
    /// - Throws: ``GQLError`` `.responseTooLarge`, `.timeout`, `.cancelled`, `.connection`, `.io`,
    ///   `.invalidArgument`.
    package func collect(_ request: HTTPClientRequest, target: String, operation: String) async throws -> Response {
        let limit = limits.maximumResponseSize
        let deadline = ContinuousClock.now + limits.timeout
        func tooLarge(_ status: Int) -> GQLError {
            GQLError(
                .responseTooLarge, "the answer from \(target) is larger than the \(limit)-byte maximum",
                operation: operation, httpStatus: status)
        }
        return try await stream(request, target: target, operation: operation) { status, headers, body in
            if let length = headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                throw tooLarge(status)
            }
            var data = Data()
            for try await chunk in body {
                guard data.count + chunk.readableBytes <= limit else { throw tooLarge(status) }
                // A body still arriving after the deadline stops at its next chunk (no timer task per request).
                guard ContinuousClock.now < deadline else { throw HTTPClientError.deadlineExceeded }
                data.append(contentsOf: chunk.readableBytesView)
            }
            return Response(status: status, headers: headers, body: data)
        }
    }

    /// Sends `request` and hands the answer's status, headers and body to `read`, which must consume the body.
    /// The body's chunks arrive with a deadline check: one still arriving after the deadline stops the read.
    package func stream<T: Sendable>(
        _ request: HTTPClientRequest, target: String, operation: String,
        read: (Int, HTTPHeaders, Body) async throws -> T
    ) async throws -> T {
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(limits.timeout.nanoseconds))
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
            default: break
            }
        }
        return GQLError(.io, "the \(operation) to \(target) failed: \(error)", operation: operation)
    }

    /// A URL without its query string or user info, which may carry credentials.
    package static func loggable(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "<unparsable URL>" }
        components.query = nil
        components.user = nil
        components.password = nil
        return components.string ?? "<unparsable URL>"
    }
}
