import Foundation
import GQLCore
import GQLHTTP
import NIOHTTP1

/// What a WebSocket upgrade request carries and what its answer must say, without any I/O.
///
/// The request's headers are the caller's: `Host`, the subprotocol and the upgrade fields NIO adds
/// (`Upgrade`, `Connection`, `Sec-WebSocket-Key`, `Sec-WebSocket-Version`), and nothing else, so no `Origin` goes
/// out unless the caller put one in `headers` (a browser sends one; a server with a same-origin check refuses a
/// wrong one, and has nothing to compare when there is none).
struct WebSocketHandshake: Sendable {
    /// The host to connect to (an IPv6 address without brackets).
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The request target: path and query, percent-encoded as given.
    let path: String
    /// The `Host` header: the host, bracketed when IPv6, with the port when the URL names one.
    let hostHeader: String
    /// The subprotocol offered; the server must choose it.
    let subprotocol: String?
    /// The caller's headers, in a stable order (the upgrade's own fields are refused, not replaced).
    let headers: [(name: String, value: String)]
    /// The URL as messages name it (no query, no user information).
    let loggableURL: String

    /// Parses `url` (`ws`, `wss`, or `http`/`https` meaning the same).
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for a URL without a host, with another scheme, or with a port out
    ///   of range; header names or values that cannot go into an HTTP request, or that the upgrade sets itself.
    init(url: String, subprotocol: String?, headers: [String: String]) throws {
        let loggable = GQLServer.loggable(url)
        self.loggableURL = loggable
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw GQLError(.invalidArgument, "'\(loggable)' is not a usable WebSocket URL (ws://host/path)")
        }
        switch scheme {
        case "ws", "http": usesTLS = false
        case "wss", "https": usesTLS = true
        default:
            throw GQLError(
                .invalidArgument, "'\(loggable)' is not a WebSocket URL: the scheme must be ws or wss, not \(scheme)")
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.host = bare
        let explicitPort = components.port
        if let explicitPort, !(1...65_535).contains(explicitPort) {
            throw GQLError(.invalidArgument, "'\(loggable)' has the port \(explicitPort), outside 1…65535")
        }
        self.port = explicitPort ?? (usesTLS ? 443 : 80)
        let named = bare.contains(":") ? "[\(bare)]" : bare
        self.hostHeader = explicitPort.map { "\(named):\($0)" } ?? named
        let encodedPath = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.path = encodedPath + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        self.subprotocol = subprotocol

        try HeaderCheck.validate(headers)
        var list: [(name: String, value: String)] = []
        for (name, value) in headers.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
            guard !Self.reserved.contains(name.lowercased()) else {
                throw GQLError(
                    .invalidArgument, "the WebSocket handshake sets '\(name)' itself: it cannot be given in headers")
            }
            list.append((name, value))
        }
        self.headers = list
    }

    /// Fields the upgrade sets itself: a caller's copy would make the request ambiguous.
    static let reserved: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
        "sec-websocket-extensions", "content-length", "transfer-encoding",
    ]

    /// The request head without the fields NIO's upgrader adds.
    var requestHead: HTTPRequestHead {
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: hostHeader)
        if let subprotocol { fields.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        for (name, value) in headers { fields.add(name: name, value: value) }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: fields)
    }

    /// Checks a `101 Switching Protocols` answer beyond what NIO checks (`Sec-WebSocket-Accept`): the server must
    /// choose the subprotocol offered, and no extension (none is offered).
    func check(_ response: HTTPResponseHead) throws {
        let chosen = response.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if let subprotocol {
            guard chosen == [subprotocol] else {
                let answer = chosen.isEmpty ? "none" : chosen.joined(separator: ", ")
                throw GQLError(
                    .connection,
                    "the WebSocket server at \(loggableURL) did not accept the subprotocol \(subprotocol) "
                        + "(it chose \(answer))")
            }
        } else if !chosen.isEmpty {
            throw GQLError(
                .connection,
                "the WebSocket server at \(loggableURL) chose the subprotocol \(chosen.joined(separator: ", ")), "
                    + "which was not offered")
        }
        if let extensions = response.headers.first(name: "Sec-WebSocket-Extensions"), !extensions.isEmpty {
            throw GQLError(
                .connection, "the WebSocket server at \(loggableURL) enabled extensions that were not offered")
        }
    }

    /// The error for an upgrade answered with another status than 101: refused credentials or origin (401/403)
    /// are `.unauthorized`, every other status `.http`; both keep the status.
    func refusal(status: HTTPResponseStatus, body: String) -> GQLError {
        let excerpt = body.trimmingCharacters(in: .whitespacesAndNewlines)
        let detail = excerpt.isEmpty ? "" : ": \(excerpt)"
        let message =
            "WebSocket upgrade refused: HTTP \(status.code) \(status.reasonPhrase) from \(loggableURL)\(detail)"
        let code: GQLError.Code = status.code == 401 || status.code == 403 ? .unauthorized : .http
        return GQLError(code, message, httpStatus: Int(status.code))
    }
}
