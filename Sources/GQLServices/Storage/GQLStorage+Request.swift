import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto
import GQLHTTP
import NIOCore

extension GQLStorage {
    /// Where requests go: scheme, host, port, and whether buckets are addressed in the path.
    struct Endpoint: Sendable {
        var scheme: String
        var host: String
        var port: Int?
        /// A path prefix of the endpoint itself (a store mounted below `/`), without a trailing slash.
        var basePath: String
        var pathStyle: Bool

        var origin: String { "\(scheme)://\(hostHeader(host))" }

        func hostHeader(_ host: String) -> String {
            guard let port, port != (scheme == "https" ? 443 : 80) else { return host }
            return "\(host):\(port)"
        }

        static func parse(_ text: String, pathStyle: Bool) -> Result<Endpoint, GQLError> {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
            else {
                return .failure(
                    GQLError(
                        .invalidArgument,
                        "'\(HTTPExchange.loggable(text))' is not a usable S3 endpoint: give http(s)://host[:port]"))
            }
            guard components.query == nil, components.user == nil else {
                return .failure(
                    GQLError(.invalidArgument, "an S3 endpoint takes no query string or user info"))
            }
            var base = components.percentEncodedPath
            while base.hasSuffix("/") { base.removeLast() }
            return .success(
                Endpoint(scheme: scheme, host: host, port: components.port, basePath: base, pathStyle: pathStyle))
        }
    }

    /// One S3 call before signing.
    struct Call: Sendable {
        var method: String
        var bucket: String
        var key: String?
        var query: [(name: String, value: String)] = []
        var headers: [(name: String, value: String)] = []
        var body = Data()
        /// The verb errors name.
        var operation: String
        /// The largest answer read, when smaller than the storage's own limit (an XML answer's
        /// ``Configuration/maximumXMLResponseSize``).
        var maximumResponseSize: Int?
    }

    /// Whether `bucket` can be a host label (virtual-hosted addressing): lowercase letters, digits and hyphens.
    static func isHostCompatible(_ bucket: String) -> Bool {
        let bytes = Array(bucket.utf8)
        guard (3...63).contains(bytes.count), bytes.first != 0x2D, bytes.last != 0x2D else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// The origin, host header and encoded path of an object (or of a bucket, with no key).
    func address(_ bucket: String, _ key: String?, operation: String) throws -> (
        origin: String, host: String, path: String
    ) {
        let endpoint = try endpoint.get()
        guard !bucket.isEmpty else {
            throw GQLError(.invalidArgument, "the bucket name is empty", operation: operation)
        }
        if let key, key.isEmpty { throw GQLError(.invalidArgument, "the object key is empty", operation: operation) }
        let virtual = !endpoint.pathStyle && Self.isHostCompatible(bucket)
        let host = endpoint.hostHeader(virtual ? "\(bucket).\(endpoint.host)" : endpoint.host)
        var path = endpoint.basePath + (virtual ? "" : "/" + SigV4Signer.encode(bucket))
        if let key {
            path += "/" + SigV4Signer.encodePath(key)
        } else if virtual || path.isEmpty {
            path += "/"
        }
        return ("\(endpoint.scheme)://\(host)", host, path)
    }

    /// The request to send for `call`, signed now.
    func signedRequest(_ call: Call, payloadHash: String? = nil) throws -> HTTPClientRequest {
        let (origin, host, path) = try address(call.bucket, call.key, operation: call.operation)
        let hash =
            payloadHash
            ?? (configuration.signsPayload || call.body.isEmpty
                ? Bytes.hex(SHA256.hash(call.body)) : SigV4Signer.unsignedPayload)
        let request = SigV4Signer.Request(
            method: call.method, origin: origin, host: host, encodedPath: path, query: call.query,
            headers: call.headers, payloadHash: hash)
        var http = HTTPClientRequest(url: request.url)
        http.method = .init(rawValue: call.method)
        http.headers.add(name: "Host", value: request.host)
        for (name, value) in call.headers { http.headers.add(name: name, value: value) }
        for (name, value) in signer.sign(request, at: configuration.now()) {
            http.headers.add(name: name, value: value)
        }
        if !call.body.isEmpty || call.method == "PUT" || call.method == "POST" {
            http.headers.add(name: "Content-Length", value: String(call.body.count))
            http.body = .bytes(ByteBuffer(bytes: call.body))
        }
        return http
    }

    /// Sends `call`, retrying what may succeed on another attempt, and returns its 2xx answer.
    func send(_ call: Call) async throws -> HTTPExchange.Response {
        var exchange = exchange
        if let limit = call.maximumResponseSize {
            exchange.limits.maximumResponseSize = min(exchange.limits.maximumResponseSize, limit)
        }
        return try await retrying(call.operation) {
            // An object's body may be large (an in-memory download): it may take as long as it keeps moving.
            let response = try await exchange.collect(
                try signedRequest(call), target: target(call), operation: call.operation,
                deadline: call.method == "GET" && call.key != nil ? .stallOnly : .overall)
            guard response.isSuccess else { throw serviceError(response, call: call) }
            // CompleteMultipartUpload and CopyObject can fail after a 200 with an <Error> body.
            if call.method == "POST", try parseXML(response, call: call)?.name == "Error" {
                throw serviceError(response, call: call)
            }
            return response
        }
    }

    /// Runs `body` up to ``Configuration/maximumAttempts`` times while it fails with a retryable error
    /// (5xx, `SlowDown`, `RequestTimeout`, timeouts, lost connections), waiting ``Configuration/backoff``
    /// between attempts.
    func retrying<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        var schedule = configuration.backoff.schedule()
        while true {
            do {
                return try await body()
            } catch let error as GQLError where Self.isRetryable(error) {
                guard schedule.failures + 1 < max(configuration.maximumAttempts, 1) else { throw error }
                do { try await schedule.wait() } catch { throw GQLError(.cancelled, "the \(operation) was cancelled") }
            }
        }
    }

    static func isRetryable(_ error: GQLError) -> Bool {
        switch error.code {
        case .timeout, .connection: return true
        case .service, .http:
            if let status = error.httpStatus, status >= 500 || status == 408 || status == 429 { return true }
            return ["SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable"].contains(
                error.serviceCode ?? "")
        default: return false
        }
    }

    /// The URL of `call` as errors name it: without the query string.
    func target(_ call: Call) -> String {
        guard case .success(let endpoint) = endpoint else { return "<unusable endpoint>" }
        return "\(endpoint.origin)/\(call.bucket)" + (call.key.map { "/" + $0 } ?? "")
    }

    /// The ``GQLError`` of a refused request, from S3's XML error body when it has one.
    func serviceError(_ response: HTTPExchange.Response, call: Call) -> GQLError {
        let xml: S3XML?
        do {
            xml = try parseXML(response, call: call)
        } catch {
            var refusal = error as? GQLError ?? GQLError(.invalidResponse, "\(error)", operation: call.operation)
            refusal.httpStatus = response.status
            return refusal
        }
        let code = xml?["Code"]
        let message = xml?["Message"]
        let requestId = xml?["RequestId"] ?? response.headers.first(name: "x-amz-request-id")
        let kind: GQLError.Code
        switch (code, response.status) {
        case ("NoSuchKey", _), ("NoSuchBucket", _), ("NoSuchUpload", _), (nil, 404): kind = .notFound
        case ("SignatureDoesNotMatch", _): kind = .signature
        case ("AccessDenied", _), ("InvalidAccessKeyId", _), ("InvalidToken", _), ("ExpiredToken", _), (nil, 403):
            kind = .accessDenied
        default: kind = .service
        }
        var text = "S3 refused the \(call.operation) of \(target(call)): HTTP \(response.status)"
        if let code { text += " \(code)" }
        if let message {
            text += ": \(message)"
        } else if xml == nil, !response.body.isEmpty {
            text += ": \(exchange.excerpt(response.body))"
        }
        return GQLError(
            kind, text, operation: call.operation, httpStatus: response.status, serviceCode: code,
            requestId: requestId)
    }

    /// The XML document of `response` to `call`, nil when it is not well-formed XML.
    ///
    /// - Throws: ``GQLError`` `.invalidResponse` when it is nested too deep or too large (see ``S3XML``).
    func parseXML(_ response: HTTPExchange.Response, call: Call) throws -> S3XML? {
        try S3XML.parse(
            response.body, answer: "the HTTP \(response.status) answer to the \(call.operation) of \(target(call))",
            operation: call.operation)
    }
}
