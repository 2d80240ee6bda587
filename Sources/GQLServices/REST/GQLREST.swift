import AsyncHTTPClient
import Foundation
import GQLCore
import GQLHTTP
import NIOCore

/// A small client for JSON and form web services: one `invoke` per call, with the path, the query, and a JSON,
/// form or multipart body; the answer decoded into a `Decodable` type or a ``GQLCore/GQLValue``.
///
/// ```swift
/// let rest = GQLREST(baseURL: "https://example.auth0.com", headers: ["Accept": "application/json"])
/// let token: Token = try await rest.invoke(.post, "oauth/token", form: ["grant_type": "password", …], as: Token.self)
/// let user = try await rest.invoke(.get, "api/v2/users/\(id)", query: ["fields": "email"])   // GQLValue
/// try await rest.invoke(.post, "upload", multipart: [.file("photo", filename: "a.png", data: png)])
/// try await rest.shutdown()
/// ```
///
/// Query and form values are percent-encoded (RFC 3986, a space as `%20`); a non-2xx answer throws
/// ``GQLCore/GQLError`` `.http` with the status, the service's own error code in ``GQLCore/GQLError/serviceCode``
/// (`error`, `code` or `errorCode`) and its description in the message (`error_description`, `message`, `errors`).
/// Header values and bodies never appear in errors or logs.
///
/// Redirects are never followed (a 3xx answer throws `.redirect` naming its target): a call carries an API key, a
/// password or a client secret that must not reach another origin. A call ends within its `timeout`, head and body;
/// the body of a refusal is read for its message up to 64 KiB, and the connection is closed rather than drained.
public final class GQLREST: Sendable {
    /// The HTTP method of a call.
    public enum Method: String, Sendable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    /// One part of a multipart/form-data body.
    public struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var data: Data

        /// A text field.
        public static func field(_ name: String, _ value: String) -> Part {
            Part(name: name, filename: nil, contentType: nil, data: Data(value.utf8))
        }

        /// A file, with its name and type.
        public static func file(
            _ name: String, filename: String, contentType: String = "application/octet-stream", data: Data
        ) -> Part {
            Part(name: name, filename: filename, contentType: contentType, data: data)
        }
    }

    /// The URL every path is relative to.
    public let baseURL: String
    let headers: [String: String]
    let exchange: HTTPExchange

    /// A service at `baseURL`; `headers` go with every call (an API key, `Accept` …).
    ///
    /// - Parameters:
    ///   - timeout: the longest a call may take, its answer's head and whole body included.
    ///   - httpClient: an AsyncHTTPClient whose event loops and settings to use; calls go through a client of this
    ///     one's own made from it with redirects off (see ``GQLREST``), shut down with it. `nil` uses the shared
    ///     event loops and the default settings.
    public init(
        baseURL: String, headers: [String: String] = [:], timeout: Duration = .seconds(30),
        maximumResponseSize: Int = 16 << 20, httpClient: HTTPClient? = nil
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.headers = headers
        var limits = HTTPExchange.Limits()
        limits.timeout = timeout
        limits.maximumResponseSize = maximumResponseSize
        self.exchange = HTTPExchange(
            client: HTTPExchange.makeClient(timeout: timeout, sharing: httpClient), limits: limits)
    }

    /// Releases the client's connections (a shared `httpClient` is left to its owner); calling it again does
    /// nothing. A GQLREST dropped without it releases them when it goes.
    public func shutdown() async throws { try await exchange.owner.shutdown() }

    /// Calls `path` and returns the answer's JSON (``GQLCore/GQLValue/null`` for an empty body).
    ///
    /// ```swift
    /// let players = try await rest.invoke(.get, "api/v1/players", query: ["app_id": appId])
    /// ```
    /// Give at most one of `json`, `form` and `multipart`.
    /// - Throws: ``GQLCore/GQLError`` `.http` for a non-2xx answer, `.invalidResponse` for a body that is not JSON,
    ///   `.invalidArgument` for two bodies or an unusable URL, and the transport errors (`.timeout`, `.connection` …).
    @discardableResult
    public func invoke(
        _ method: Method, _ path: String, query: [String: String] = [:], json: GQLValue? = nil,
        form: [String: String]? = nil, multipart: [Part]? = nil, headers: [String: String] = [:]
    ) async throws -> GQLValue {
        let body = try await send(
            method, path, query: query, json: json, form: form, multipart: multipart, headers: headers)
        guard !body.isEmpty else { return .null }
        do {
            return try GQLValue(json: body)
        } catch {
            throw GQLError(
                .invalidResponse,
                "the answer to \(method.rawValue) \(target(path)) is not JSON: \(exchange.excerpt(body))",
                operation: path)
        }
    }

    /// Calls `path` and decodes the answer's JSON as `T`.
    ///
    /// ```swift
    /// struct Token: Decodable { var access_token: String; var expires_in: Int }
    /// let token = try await rest.invoke(.post, "oauth/token", form: fields, as: Token.self)
    /// ```
    public func invoke<T: Decodable>(
        _ method: Method, _ path: String, query: [String: String] = [:], json: GQLValue? = nil,
        form: [String: String]? = nil, multipart: [Part]? = nil, headers: [String: String] = [:], as type: T.Type
    ) async throws -> T {
        let body = try await send(
            method, path, query: query, json: json, form: form, multipart: multipart, headers: headers)
        do {
            return try JSONDecoder().decode(T.self, from: body.isEmpty ? Data("null".utf8) : body)
        } catch {
            throw GQLError(
                .decoding, "the answer to \(method.rawValue) \(target(path)) does not decode as \(T.self): \(error)",
                operation: path)
        }
    }

    // MARK: - Sending

    private func send(
        _ method: Method, _ path: String, query: [String: String], json: GQLValue?, form: [String: String]?,
        multipart: [Part]?, headers callHeaders: [String: String]
    ) async throws -> Data {
        guard [json != nil, form != nil, multipart != nil].filter({ $0 }).count <= 1 else {
            throw GQLError(.invalidArgument, "give at most one of json, form and multipart", operation: path)
        }
        var request = HTTPClientRequest(url: url(path, query: query))
        request.method = .init(rawValue: method.rawValue)
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers.merging(callHeaders, uniquingKeysWith: { $1 }) {
            guard Self.isValidHeader(name: name, value: value) else {
                throw GQLError(
                    .invalidArgument, "the header '\(name)' has an invalid name or value (not quoted)", operation: path)
            }
            request.headers.replaceOrAdd(name: name, value: value)
        }
        var body: Data?
        if let json {
            body = try json.jsonData()
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        } else if let form {
            body = Data(Self.formEncoded(form).utf8)
            request.headers.replaceOrAdd(name: "Content-Type", value: "application/x-www-form-urlencoded")
        } else if let multipart {
            let boundary = "gqlrest-" + UUID().uuidString
            body = Self.multipartBody(multipart, boundary: boundary)
            request.headers.replaceOrAdd(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
        }
        if let body {
            request.headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await exchange.collect(request, target: target(path), operation: path)
        guard response.isSuccess else { throw serviceError(response, method: method, path: path) }
        return response.body
    }

    /// The URL of `path` with `query` encoded and sorted (so the same call always has the same URL).
    func url(_ path: String, query: [String: String]) -> String {
        let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
        let encoded = Self.formEncoded(query)
        return baseURL + "/" + relative + (encoded.isEmpty ? "" : (relative.contains("?") ? "&" : "?") + encoded)
    }

    func target(_ path: String) -> String { HTTPExchange.loggable(url(path, query: [:])) }

    /// The error of a non-2xx answer, with the service's own error fields when its body is JSON.
    func serviceError(_ response: HTTPExchange.Response, method: Method, path: String) -> GQLError {
        let json = try? GQLValue(json: response.body)
        func text(_ key: String) -> String? {
            switch json?[key] {
            case .string(let value)?: value
            case .int(let value)?: String(value)
            default: nil
            }
        }
        let code = text("error") ?? text("code") ?? text("errorCode")
        var description = text("error_description") ?? text("message") ?? text("description")
        if description == nil, case .array(let errors)? = json?["errors"] {
            // The first few, like every summary of a service's errors.
            let first = errors.prefix(3).map { $0.stringValue ?? (try? $0.jsonString()) ?? "" }
            description = first.joined(separator: "; ") + (errors.count > 3 ? " (+\(errors.count - 3) more)" : "")
        }
        description = description.map { exchange.excerpt(Array($0.utf8)) }
        var message = "\(method.rawValue) \(target(path)) answered HTTP \(response.status)"
        if let code { message += " \(code)" }
        if let description {
            message += ": \(description)"
        } else if json == nil, !response.body.isEmpty {
            message += ": \(exchange.excerpt(response.body))"
        }
        return GQLError(
            .http, message, operation: path, httpStatus: response.status, serviceCode: code,
            requestId: response.headers.first(name: "x-request-id"))
    }

    // MARK: - Encoding

    /// `name=value&…`, sorted by name, every byte but `A-Z a-z 0-9 - _ . ~` percent-encoded.
    static func formEncoded(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { percentEncoded($0.key) + "=" + percentEncoded($0.value) }
            .joined(separator: "&")
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x5F, 0x2E, 0x7E:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    static func multipartBody(_ parts: [Part], boundary: String) -> Data {
        var body = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(part.name))\""
            if let filename = part.filename { head += "; filename=\"\(quoted(filename))\"" }
            head += "\r\n"
            if let type = part.contentType { head += "Content-Type: \(type)\r\n" }
            body.append(Data((head + "\r\n").utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// A name or file name inside a quoted header parameter: quotes, backslashes and line breaks escaped.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    static func isValidHeader(name: String, value: String) -> Bool {
        HeaderCheck.isToken(name) && HeaderCheck.isFieldValue(value)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
