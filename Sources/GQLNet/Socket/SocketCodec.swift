import Foundation
import GQLCore

extension GQLServer {
    /// The WebSocket subprotocol a ``GQLServer`` speaks for subscriptions.
    ///
    /// ```swift
    /// let server = GQLServer(WebSocket: "ws://127.0.0.1:4000/graphql", protocol: .graphqlWS)
    /// ```
    public enum WebSocketProtocol: String, Sendable, Hashable, CaseIterable {
        /// `graphql-transport-ws` (the graphql-ws library's protocol): `subscribe`/`next`/`complete`, ping and pong.
        case graphqlTransportWS = "graphql-transport-ws"
        /// The legacy `graphql-ws` protocol of subscriptions-transport-ws: `start`/`data`/`stop` and `ka`.
        case graphqlWS = "graphql-ws"
        /// AWS AppSync real-time: `graphql-ws` with the authorization in the URL and in every `start`.
        case appSync = "appsync"
    }
}

/// A message from the server, whichever protocol carried it.
enum ServerMessage: Equatable, Sendable {
    /// The connection was accepted; AppSync says how long it may stay silent.
    case ack(keepAliveTimeout: Duration?)
    /// A `graphql-transport-ws` ping, to be answered with a pong carrying the same payload.
    case ping(GQLValue?)
    case pong
    /// A legacy or AppSync keep-alive (`ka`).
    case keepAlive
    /// One result (`{"data": …, "errors": …}`) of an operation.
    case next(id: String, GQLValue)
    /// The operation failed before or instead of producing results.
    case error(id: String, [GQLValue])
    /// The operation has no more results.
    case complete(id: String)
    /// AppSync accepted a subscription.
    case startAck(id: String)
    /// The server refused the connection (legacy and AppSync `connection_error`).
    case connectionError(GQLValue?)
    /// A message this client does not know; ignored.
    case unknown(String)

    /// Whether the message shows the protocol alive for the keep-alive: every message but `ping` and those of an
    /// unknown type (a server flooding them while never reading our ping must still time out).
    var isActivity: Bool {
        switch self {
        case .ping, .unknown: false
        default: true
        }
    }
}

/// Turns client intents into the wire messages of one protocol, and the server's messages into ``ServerMessage``s.
struct SocketCodec: Sendable {
    let kind: GQLServer.WebSocketProtocol

    /// The `Sec-WebSocket-Protocol` to offer.
    var subprotocol: String { kind == .appSync ? "graphql-ws" : kind.rawValue }

    func connectionInit(payload: GQLValues?) -> GQLValue {
        var message: GQLValues = ["type": "connection_init"]
        if let payload, !payload.isEmpty { message["payload"] = .object(payload) }
        return .object(message)
    }

    /// The message starting an operation. `request` is `{"query": …, "variables": …}`.
    func start(id: String, request: GQLValue) throws -> GQLValue {
        switch kind {
        case .graphqlTransportWS:
            return ["type": "subscribe", "id": .string(id), "payload": request]
        case .graphqlWS:
            return ["type": "start", "id": .string(id), "payload": request]
        case .appSync:
            // AppSync wants the request as a JSON string, so quotes in the query survive as escaped text.
            return ["type": "start", "id": .string(id), "payload": ["data": .string(try request.jsonString())]]
        }
    }

    /// An AppSync `start` carrying the connection's authorization in `payload.extensions`, as AppSync requires.
    static func authorize(_ start: GQLValue, with authorization: GQLValues) -> GQLValue {
        guard case .object(var message) = start, case .object(var payload)? = message["payload"] else { return start }
        payload["extensions"] = ["authorization": .object(authorization)]
        message["payload"] = .object(payload)
        return .object(message)
    }

    func stop(id: String) -> GQLValue {
        kind == .graphqlTransportWS ? ["type": "complete", "id": .string(id)] : ["type": "stop", "id": .string(id)]
    }

    /// The answer to a server ping (`graphql-transport-ws` only).
    func pong(_ payload: GQLValue?) -> GQLValue {
        guard let payload else { return ["type": "pong"] }
        return ["type": "pong", "payload": payload]
    }

    /// A client ping, or `nil` where the protocol has none (the server sends `ka` instead).
    var ping: GQLValue? { kind == .graphqlTransportWS ? ["type": "ping"] : nil }

    /// The goodbye sent before a client closes, where the protocol has one.
    var terminate: GQLValue? { kind == .graphqlWS ? ["type": "connection_terminate"] : nil }

    /// Reads one text frame.
    ///
    /// - Throws: ``GQLError`` `.invalidResponse` when the frame is not a JSON object with a string `type`, or an
    ///   operation message has no `id`.
    func decode(_ text: String) throws -> ServerMessage {
        let value: GQLValue
        do {
            value = try GQLValue(json: text)
        } catch {
            throw GQLError(
                .invalidResponse, "the server sent a WebSocket message that is not JSON: \(Self.excerpt(text))")
        }
        guard case .object(let message) = value, let type = message["type"]?.stringValue else {
            throw GQLError(
                .invalidResponse, "the server sent a WebSocket message without a string `type`: \(Self.excerpt(text))")
        }
        let payload = message["payload"]
        func id() throws -> String {
            guard let id = message["id"]?.stringValue else {
                throw GQLError(.invalidResponse, "the server sent a `\(type)` message without an `id`")
            }
            return id
        }
        switch type {
        case "connection_ack":
            // Only AppSync announces how long it may stay silent; another server's payload field means nothing here.
            let milliseconds = kind == .appSync ? payload?["connectionTimeoutMs"]?.intValue : nil
            return .ack(keepAliveTimeout: milliseconds.map { .milliseconds($0) })
        case "ping": return .ping(payload)
        case "pong": return .pong
        case "ka": return .keepAlive
        case "next", "data":
            return .next(id: try id(), payload ?? .null)
        case "error":
            return .error(id: try id(), Self.errors(in: payload))
        case "complete": return .complete(id: try id())
        case "start_ack": return .startAck(id: try id())
        case "connection_error": return .connectionError(payload)
        default: return .unknown(type)
        }
    }

    /// The error objects of an `error` payload: an array (graphql-transport-ws), `{"errors": […]}` (AppSync) or a
    /// single error object (legacy graphql-ws).
    static func errors(in payload: GQLValue?) -> [GQLValue] {
        switch payload {
        case .array(let errors)?: return errors
        case .object(let members)?:
            if case .array(let errors)? = members["errors"] { return errors }
            return [.object(members)]
        case let other?: return [["message": .string(other.stringValue ?? "\(other)")]]
        case nil: return [["message": "the server reported an error without details"]]
        }
    }

    static func excerpt(_ text: String) -> String {
        text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
