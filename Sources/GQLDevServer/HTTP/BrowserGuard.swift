import HTTPTypes
import Hummingbird

/// Keeps web pages from using the server unless they come from an allowed origin.
///
/// - A request with an `Origin` header (browsers send one on every cross-origin request, and on every POST) is
///   refused with 403 unless ``GQLDevServer/Configuration/allowedOrigins`` lists that origin (or `*`); allowed
///   ones get `Access-Control-Allow-Origin` on their answers.
/// - A CORS preflight (`OPTIONS`) from an allowed origin is answered 204 with the methods and headers the endpoint
///   accepts; other `OPTIONS` get 204 with `Allow` and no CORS headers, so browsers refuse the real request.
/// - CSRF prevention as Apollo Server does it, for browsers that send no `Origin`: a POST whose `Content-Type` is
///   missing or one a plain HTML form or `fetch` may send without a preflight (`text/plain`,
///   `application/x-www-form-urlencoded`, `multipart/form-data`) is refused with 400 unless it carries a header
///   only a preflighted request can (`apollo-require-preflight`, `x-apollo-operation-name`, or the server's own
///   credential headers). GET runs no mutations, so it needs no such check.
///
/// - A WebSocket upgrade from a browser (an `http(s)` or `null` `Origin`) must come from an allowed origin too
///   (``allowsUpgrade(_:_:)``); a refused upgrade gets HTTP 400.
///
/// Clients that are not browsers send no `Origin` and `Content-Type: application/json`, and pass untouched.
struct BrowserGuard<Context: RequestContext>: RouterMiddleware {
    let allowedOrigins: Set<String>

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let origin = request.headers[.origin]
        if let origin, !BrowserRules.allows(origin, allowedOrigins) {
            return HTTPTransport.error(
                .forbidden,
                "Requests from the web origin \(origin) are not allowed; start the server with it in "
                    + "allowedOrigins (gql-cli serve --allowed-origin).", code: "FORBIDDEN_ORIGIN")
        }
        if request.method == .options {
            var response = Response(status: .noContent, headers: [.allow: "GET, POST, OPTIONS"])
            if let origin {
                response.headers[.accessControlAllowOrigin] = origin
                response.headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
                response.headers[.accessControlAllowHeaders] =
                    request.headers[.accessControlRequestHeaders] ?? "content-type"
                response.headers[.accessControlMaxAge] = "600"
                response.headers[.vary] = "Origin"
            }
            return response
        }
        if request.method == .post, BrowserRules.isSimple(request.headers[.contentType]),
            !BrowserRules.preflightHeaders.contains(where: { !(request.headers[$0] ?? "").isEmpty })
        {
            return HTTPTransport.error(
                .badRequest,
                "This request was blocked as a potential cross-site request forgery: send Content-Type: "
                    + "application/json, or a non-empty apollo-require-preflight header.", code: "BAD_REQUEST")
        }
        var response = try await next(request, context)
        if let origin {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.vary] = "Origin"
        }
        return response
    }

    /// Whether a WebSocket upgrade carrying `origins` may go ahead: browsers always send their page's origin
    /// (`http(s)://…`, or `null`), which must be allowed; other clients send none, or a non-web one such as the
    /// `ws://host` some WebSocket libraries add, and pass.
    static func allowsUpgrade(_ origins: [String], _ allowed: Set<String>) -> Bool {
        guard !allowed.contains("*") else { return true }
        return origins.allSatisfy { origin in
            let lowered = origin.lowercased()
            let isWeb = lowered == "null" || lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
            return !isWeb || allowed.contains(origin)
        }
    }
}

/// The request shapes ``BrowserGuard`` decides on, built once (a generic type cannot hold static stored properties,
/// and this check runs for every POST).
enum BrowserRules {
    /// Headers a browser sends only after a preflight, so their presence shows the request was preflighted.
    static let preflightHeaders: [HTTPField.Name] = [
        HTTPField.Name("apollo-require-preflight"), HTTPField.Name("x-apollo-operation-name"),
        HTTPField.Name("x-api-key"), HTTPField.Name("x-hasura-admin-secret"), .authorization,
    ].compactMap { $0 }

    /// Content types a browser sends without a preflight (the CORS "simple" ones), lowercased.
    static let simpleContentTypes: [[UInt8]] = [
        Array("text/plain".utf8), Array("application/x-www-form-urlencoded".utf8), Array("multipart/form-data".utf8),
    ]

    /// Whether requests from the web page of `origin` are served (`allowed` lists it, or `*`).
    static func allows(_ origin: String, _ allowed: Set<String>) -> Bool {
        allowed.contains(origin) || allowed.contains("*")
    }

    /// Whether `contentType` is missing, empty or one a browser sends without a preflight: its media type (before `;`,
    /// without surrounding spaces or tabs) compared with the simple ones, ignoring ASCII case.
    static func isSimple(_ contentType: String?) -> Bool {
        guard var contentType else { return true }
        // Read as contiguous bytes: the `String.UTF8View` slices this was written with cost every POST about 1,000
        // instructions (callgrind-server.sh).
        return contentType.withUTF8 { isSimple(UnsafeRawBufferPointer($0)) }
    }

    /// ``isSimple(_:)`` of a content type given as its bytes (the direct path's reader hands the header's value over
    /// as it lies in the connection's buffer, with no `String` made of it).
    static func isSimple(_ utf8: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.count
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start += 1 }
        while end > start, utf8[end - 1] == 0x20 || utf8[end - 1] == 0x09 { end -= 1 }
        guard start < end else { return true }  // an empty type is as good as none
        return simpleContentTypes.contains { simple in
            guard simple.count == end - start else { return false }
            for (offset, expected) in simple.enumerated() {
                let byte = utf8[start + offset]
                guard expected == (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) else { return false }
            }
            return true
        }
    }
}
