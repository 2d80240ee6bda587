import Foundation
import GQLCore

/// The rules of Apollo's legacy `graphql-ws` protocol (subscriptions-transport-ws) for one connection, without
/// I/O: each inbound message becomes one ``Action`` for ``LegacyWSSession`` to carry out.
///
/// ```swift
/// var machine = LegacyWSStateMachine(authenticator: authenticator, handshake: credentials)
/// machine.receive(type: "start", ["id": "1", "payload": ["query": "{ a }"]])
/// // .send(error "Send connection_init before start.")
/// ```
///
/// Unlike graphql-transport-ws, most faults keep the socket open, as in the reference server: an unreadable
/// message gets `connection_error`, an unknown type or a bad `start` an `error`.
///
/// Every input is a client's message, so no transition here is impossible and none traps in debug builds (unlike
/// GQLNet's socket and GQLSync's delivery machines, fed by drivers of our own): each fault gets the protocol's answer.
struct LegacyWSStateMachine {
    typealias Action = SessionAction

    let authenticator: DevAuthenticator
    /// Credentials from the upgrade request's headers, merged under those of `connection_init`.
    let handshake: DevAuthenticator.Credentials
    /// Whether `connection_ack` went out: `start` is allowed.
    private(set) var isAcknowledged = false
    /// Until when the connection's token is good (`nil`: its credentials do not expire).
    private var authorizedUntil: Date?
    /// The identity of the connection's token (its `sub`), for owner-scoped models.
    private var owner: String?

    init(authenticator: DevAuthenticator, handshake: DevAuthenticator.Credentials) {
        self.authenticator = authenticator
        self.handshake = handshake
    }

    /// The action for one message: its `type` and JSON object, or `nil` for a message that is not such an object.
    mutating func receive(_ message: (type: String, object: GQLValues)?) -> Action {
        guard let (type, object) = message else {
            return .send(["type": "connection_error", "payload": ["message": "Message must be JSON with a type."]])
        }
        let id = object["id"]?.stringValue
        switch type {
        case "connection_init":
            return connectionInit(object["payload"])
        case "start":
            guard let id else { return .send(["type": "error", "payload": ["message": "start needs an id"]]) }
            guard !authenticator.hasExpired(authorizedUntil) else {
                return .close(nil, code: 4401, reason: "Unauthorized: the token expired")
            }
            guard isAcknowledged else { return .send(Self.error(id, "Send connection_init before start.")) }
            switch WebSocketTransport.graphQLRequest(object["payload"]) {
            case .success(let request): return .run(id: id, request: request.owned(by: owner))
            case .failure(let failure): return .send(Self.error(id, failure.message))
            }
        case "stop":
            guard let id else { return .none }
            return .stop(id: id)
        case "connection_terminate":
            return .close(nil, code: 1000, reason: "Connection terminated")
        default:
            var reply: GQLValues = ["type": "error", "payload": ["message": .string("Invalid message type \(type)")]]
            if let id { reply["id"] = .string(id) }
            return .send(.object(reply))
        }
    }

    /// Credentials from the payload over the handshake's; refused ones end the connection (4401 where tokens are
    /// checked, 4403 for keys); a repeated init is ignored.
    private mutating func connectionInit(_ payload: GQLValue?) -> Action {
        let credentials = DevAuthenticator.Credentials(json: payload).merging(handshake)
        switch authenticator.check(credentials) {
        case .failure(let refusal):
            let code = authenticator.refusalCloseCode
            let message = code == 4401 ? "Unauthorized: \(refusal.reason)" : "Forbidden: invalid credentials"
            return .close(
                ["type": "connection_error", "payload": ["message": .string(message)]], code: code,
                reason: code == 4401 ? TransportWSStateMachine.closeReason(refusal) : "Forbidden")
        case .success(let until):
            guard !isAcknowledged else { return .none }
            isAcknowledged = true
            authorizedUntil = until
            owner = authenticator.owner(credentials)
            return .acknowledge
        }
    }

    /// An `error` message for operation `id`.
    static func error(_ id: String, _ message: String) -> GQLValue {
        ["type": "error", "id": .string(id), "payload": ["message": .string(message)]]
    }
}
