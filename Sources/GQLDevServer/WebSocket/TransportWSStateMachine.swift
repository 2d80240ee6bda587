import Foundation
import GQLCore

/// The rules of `graphql-transport-ws` for one connection, without I/O: each inbound message becomes one
/// ``Action`` for ``TransportWSSession`` to carry out.
///
/// ```swift
/// var machine = TransportWSStateMachine(authenticator: authenticator, handshake: credentials)
/// machine.receive(["type": "subscribe", "id": "1", "payload": ["query": "{ a }"]])
/// // .close(code: 4401, reason: "Unauthorized"): no connection_init yet
/// ```
///
/// Whether an id is already running (4409) is the session's to tell, since operations end in their own tasks.
///
/// Every input is a client's message, so no transition here is impossible and none traps in debug builds (unlike
/// GQLNet's socket and GQLSync's delivery machines, fed by drivers of our own): each fault gets the protocol's answer.
struct TransportWSStateMachine {
    /// What the session does with a message.
    enum Action: Equatable {
        /// Send this message.
        case send(GQLValue)
        /// Close the socket with this code and reason, and stop reading.
        case close(code: Int, reason: String)
        /// Run the operation `request` under `id` (or close 4409 when `id` is running).
        case run(id: String, request: DevEngine.Request)
        /// Stop the operation `id`, if it runs; send nothing.
        case stop(id: String)
        /// Nothing to do.
        case none
    }

    let authenticator: DevAuthenticator
    /// Credentials from the upgrade request's headers, used when `connection_init` carries none.
    let handshake: DevAuthenticator.Credentials
    private var initReceived = false
    /// Whether `connection_ack` went out: `subscribe` is allowed, the init timeout no longer applies.
    private(set) var isAcknowledged = false
    /// Until when the connection's token is good (`nil`: its credentials do not expire).
    private var authorizedUntil: Date?
    /// The identity of the connection's token (its `sub`), for owner-scoped models.
    private var owner: String?

    init(authenticator: DevAuthenticator, handshake: DevAuthenticator.Credentials) {
        self.authenticator = authenticator
        self.handshake = handshake
    }

    /// The action for one message: `message` is its JSON object, `nil` for a message that is not one.
    mutating func receive(_ message: GQLValues?) -> Action {
        guard let message, let type = message["type"]?.stringValue else {
            return .close(code: 4400, reason: "Invalid message: expected a JSON object with a type")
        }
        switch type {
        case "connection_init":
            return connectionInit(message["payload"])
        case "ping":
            return .send(["type": "pong"])
        case "pong":
            return .none
        case "subscribe":
            guard isAcknowledged else { return .close(code: 4401, reason: "Unauthorized") }
            guard !authenticator.hasExpired(authorizedUntil) else {
                return .close(code: 4401, reason: "Unauthorized: the token expired")
            }
            guard let id = message["id"]?.stringValue, !id.isEmpty else {
                return .close(code: 4400, reason: "Invalid message: subscribe needs an id")
            }
            switch WebSocketTransport.graphQLRequest(message["payload"]) {
            case .success(let request): return .run(id: id, request: request.owned(by: owner))
            case .failure(let failure): return .close(code: 4400, reason: "Invalid message: \(failure.message)")
            }
        case "complete":
            guard let id = message["id"]?.stringValue else {
                return .close(code: 4400, reason: "Invalid message: complete needs an id")
            }
            return .stop(id: id)
        default:
            return .close(code: 4400, reason: "Invalid message: unknown type \(type)")
        }
    }

    /// The action when ``GQLDevServer/Configuration/connectionInitTimeout`` has passed since the socket opened.
    func initTimeoutElapsed() -> Action {
        isAcknowledged ? .none : .close(code: 4408, reason: "Connection initialisation timeout")
    }

    /// `Unauthorized: <why>`, cut to fit a close frame (123 bytes).
    static func closeReason(_ refusal: DevAuthenticator.Refusal) -> String {
        var reason = "Unauthorized: \(refusal.reason)"
        while reason.utf8.count > 123 { reason.removeLast() }
        return reason
    }

    /// The action for a second subscribe with a running id.
    static func duplicate(_ id: String) -> Action {
        .close(code: 4409, reason: "Subscriber for \(id) already exists")
    }

    private mutating func connectionInit(_ payload: GQLValue?) -> Action {
        guard !initReceived else { return .close(code: 4429, reason: "Too many initialisation requests") }
        initReceived = true
        if let payload, !payload.isNull, payload.objectValue == nil {
            return .close(code: 4400, reason: "Invalid message: connection_init payload must be an object")
        }
        let credentials = DevAuthenticator.Credentials(json: payload).merging(handshake)
        switch authenticator.check(credentials) {
        case .success(let until):
            authorizedUntil = until
            owner = authenticator.owner(credentials)
        case .failure(let refusal):
            let code = authenticator.refusalCloseCode
            return .close(code: code, reason: code == 4401 ? Self.closeReason(refusal) : "Forbidden")
        }
        isAcknowledged = true
        return .send(["type": "connection_ack"])
    }
}
