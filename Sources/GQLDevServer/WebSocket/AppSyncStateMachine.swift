import GQLCore

/// The rules of AWS AppSync's real-time protocol for one connection, without I/O: each inbound message becomes one
/// ``Action`` for ``AppSyncSession`` to carry out.
///
/// ```swift
/// var machine = AppSyncStateMachine(authenticator: authenticator, handshake: credentials)
/// machine.receive((type: "start", object: ["id": "1", "payload": ["data": "{\"query\": …}"]]))
/// // .run(id: "1", request: …) when the start's (or the connection's) credentials are good
/// ```
///
/// Whether the operation is a subscription (AppSync serves nothing else over the socket) is the session's to
/// tell: it needs the engine's parse of the document.
///
/// Every input is a client's message, so no transition here is impossible and none traps in debug builds (unlike
/// GQLNet's socket and GQLSync's delivery machines, fed by drivers of our own): each fault gets the protocol's answer.
struct AppSyncStateMachine {
    typealias Action = SessionAction

    let authenticator: DevAuthenticator
    /// Credentials from the `header` query parameter or subprotocol: the connection's, and each `start`'s when
    /// it carries none of its own.
    let handshake: DevAuthenticator.Credentials
    /// Whether `connection_ack` went out.
    private(set) var isAcknowledged = false

    init(authenticator: DevAuthenticator, handshake: DevAuthenticator.Credentials) {
        self.authenticator = authenticator
        self.handshake = handshake
    }

    /// The action for one message: its `type` and JSON object, or `nil` for a message that is not such an object.
    mutating func receive(_ message: (type: String, object: GQLValues)?) -> Action {
        guard let (type, object) = message else {
            return .send(Self.error(nil, "BadRequestException", "Message must be JSON with a type."))
        }
        let id = object["id"]?.stringValue
        switch type {
        case "connection_init":
            guard authenticator.authorizes(handshake) else {
                let error: GQLValue = [
                    "errorType": "UnauthorizedException", "message": "You are not authorized to make this call.",
                    "errorCode": 401,
                ]
                return .close(
                    ["type": "connection_error", "payload": ["errors": [error]]], code: 4403, reason: "Forbidden")
            }
            guard !isAcknowledged else { return .none }
            isAcknowledged = true
            return .acknowledge
        case "start":
            guard let id else { return .send(Self.error(nil, "BadRequestException", "start needs an id")) }
            return start(id: id, payload: object["payload"])
        case "stop":
            guard let id else { return .none }
            return .stop(id: id)
        default:
            return .send(Self.error(id, "UnsupportedOperation", "Unknown message type \(type)"))
        }
    }

    /// The request travels as a JSON string in `payload.data`, its credentials in `payload.extensions
    /// .authorization` (the connection's when it has none).
    private func start(id: String, payload: GQLValue?) -> Action {
        guard let data = payload?["data"]?.stringValue, let decoded = try? GQLValue(json: data) else {
            return .send(Self.error(id, "BadRequestException", "payload.data must be a JSON string"))
        }
        let request: DevEngine.Request
        switch WebSocketTransport.graphQLRequest(decoded) {
        case .success(let value): request = value
        case .failure(let failure): return .send(Self.error(id, "BadRequestException", failure.message))
        }
        let offered = DevAuthenticator.Credentials(json: payload?["extensions"]?["authorization"])
        let credentials = offered.isEmpty ? handshake : offered
        guard authenticator.authorizes(credentials) else {
            return .send(Self.error(id, "UnauthorizedException", "Permission denied"))
        }
        return .run(id: id, request: request.owned(by: authenticator.owner(credentials)))
    }

    /// An AppSync error message, for the operation `id` when there is one.
    static func error(_ id: String?, _ errorType: String, _ message: String) -> GQLValue {
        var reply: GQLValues = [
            "type": "error",
            "payload": ["errors": [["errorType": .string(errorType), "message": .string(message)]]],
        ]
        if let id { reply["id"] = .string(id) }
        return .object(reply)
    }
}
