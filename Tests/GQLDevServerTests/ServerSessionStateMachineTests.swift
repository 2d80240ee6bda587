import Foundation
import GQLCore
import GQLCrypto
import Testing

@testable import GQLDevServer

/// The legacy graphql-ws and AppSync real-time rules without a socket: messages in, actions out.
@Suite("legacy graphql-ws and AppSync state machines")
struct ServerSessionStateMachineTests {
    static let start: (type: String, object: GQLValues) = (
        "start", ["id": "1", "payload": ["query": "subscription { onCreateObjects { objectId } }"]]
    )
    static let request = DevEngine.Request(query: "subscription { onCreateObjects { objectId } }")

    static func keyed(_ key: String? = nil) -> DevAuthenticator {
        DevAuthenticator(apiKey: key, adminSecret: nil)
    }

    /// An authenticator checking HS256 tokens at a clock the test moves.
    static func tokens(clock: GQLLocked<Date>) throws -> DevAuthenticator {
        let check = try DevTokenCheck(.init(keys: .sharedSecret("secret")), clock: { clock.withLock { $0 } })
        return DevAuthenticator(apiKey: nil, adminSecret: nil, tokens: check)
    }

    static func token(expiring expiry: Date) throws -> String {
        try JWTSigner.hs256(["sub": "user-1", "exp": .int(Int64(expiry.timeIntervalSince1970))], secret: "secret")
    }

    // MARK: - Legacy graphql-ws

    @Test("legacy: init is acknowledged once; start needs it; stop and terminate")
    func legacyLifecycle() {
        var machine = LegacyWSStateMachine(authenticator: Self.keyed(), handshake: .init())
        #expect(
            machine.receive(Self.start) == .send(LegacyWSStateMachine.error("1", "Send connection_init before start.")))
        #expect(machine.receive(("connection_init", [:])) == .acknowledge)
        #expect(machine.isAcknowledged)
        #expect(machine.receive(("connection_init", [:])) == .none)
        #expect(machine.receive(Self.start) == .run(id: "1", request: Self.request))
        #expect(machine.receive(("stop", ["id": "1"])) == .stop(id: "1"))
        #expect(machine.receive(("stop", [:])) == .none)
        #expect(
            machine.receive(("connection_terminate", [:])) == .close(nil, code: 1000, reason: "Connection terminated"))
    }

    @Test("legacy: faults keep the socket open with an error or connection_error")
    func legacyFaults() {
        var machine = LegacyWSStateMachine(authenticator: Self.keyed(), handshake: .init())
        _ = machine.receive(("connection_init", [:]))
        #expect(
            machine.receive(nil)
                == .send(["type": "connection_error", "payload": ["message": "Message must be JSON with a type."]]))
        #expect(
            machine.receive(("shout", ["id": "7"]))
                == .send(["type": "error", "id": "7", "payload": ["message": "Invalid message type shout"]]))
        #expect(
            machine.receive(("start", [:])) == .send(["type": "error", "payload": ["message": "start needs an id"]]))
        guard case .send(let reply) = machine.receive(("start", ["id": "2", "payload": ["variables": [:]]])) else {
            Issue.record("a start without a query must be answered with an error")
            return
        }
        #expect(reply["type"] == "error")
        #expect(reply["id"] == "2")
    }

    @Test("legacy: wrong keys close 4403 after connection_error; the handshake's key is enough")
    func legacyKeys() {
        var wrong = LegacyWSStateMachine(authenticator: Self.keyed("k"), handshake: .init())
        #expect(
            wrong.receive(("connection_init", ["payload": ["x-api-key": "no"]]))
                == .close(
                    ["type": "connection_error", "payload": ["message": "Forbidden: invalid credentials"]], code: 4403,
                    reason: "Forbidden"))
        #expect(!wrong.isAcknowledged)
        var handshake = LegacyWSStateMachine(authenticator: Self.keyed("k"), handshake: .init(apiKey: "k"))
        #expect(handshake.receive(("connection_init", [:])) == .acknowledge)
    }

    @Test("legacy: a token refused closes 4401; a start after it expired closes 4401")
    func legacyTokens() throws {
        let clock = GQLLocked(Date(timeIntervalSince1970: 1_800_000_000))
        let token = try Self.token(expiring: Date(timeIntervalSince1970: 1_800_000_060))
        var none = LegacyWSStateMachine(authenticator: try Self.tokens(clock: clock), handshake: .init())
        guard case .close(_, let code, _) = none.receive(("connection_init", [:])) else {
            Issue.record("an init without a token must close")
            return
        }
        #expect(code == 4401)
        var machine = LegacyWSStateMachine(
            authenticator: try Self.tokens(clock: clock), handshake: .init(authorization: "Bearer \(token)"))
        #expect(machine.receive(("connection_init", [:])) == .acknowledge)
        // The request runs on behalf of the token's `sub`, for owner-scoped models.
        #expect(machine.receive(Self.start) == .run(id: "1", request: Self.request.owned(by: "user-1")))
        clock.withLock { $0 = Date(timeIntervalSince1970: 1_800_000_061) }
        #expect(machine.receive(Self.start) == .close(nil, code: 4401, reason: "Unauthorized: the token expired"))
    }

    // MARK: - AppSync

    static func appSyncStart(_ id: String = "1", authorization: GQLValue? = nil) throws -> (
        type: String, object: GQLValues
    ) {
        var payload: GQLValues = [
            "data": .string(try GQLValue.object(["query": .string(Self.request.query)]).jsonString())
        ]
        if let authorization { payload["extensions"] = ["authorization": authorization] }
        return ("start", ["id": .string(id), "payload": .object(payload)])
    }

    @Test("AppSync: ack once, start runs, stop answers complete, unknown types are UnsupportedOperation")
    func appSyncLifecycle() throws {
        var machine = AppSyncStateMachine(authenticator: Self.keyed(), handshake: .init())
        #expect(machine.receive(("connection_init", [:])) == .acknowledge)
        #expect(machine.receive(("connection_init", [:])) == .none)
        #expect(machine.receive(try Self.appSyncStart()) == .run(id: "1", request: Self.request))
        #expect(machine.receive(("stop", ["id": "1"])) == .stop(id: "1"))
        #expect(
            machine.receive(("shout", ["id": "2"]))
                == .send(AppSyncStateMachine.error("2", "UnsupportedOperation", "Unknown message type shout")))
        #expect(
            machine.receive(nil)
                == .send(AppSyncStateMachine.error(nil, "BadRequestException", "Message must be JSON with a type.")))
    }

    @Test("AppSync: the request must be a JSON string in payload.data")
    func appSyncPayload() {
        var machine = AppSyncStateMachine(authenticator: Self.keyed(), handshake: .init())
        _ = machine.receive(("connection_init", [:]))
        let bad = AppSyncStateMachine.error("1", "BadRequestException", "payload.data must be a JSON string")
        #expect(machine.receive(("start", ["id": "1", "payload": ["data": ["query": "{ a }"]]])) == .send(bad))
        #expect(machine.receive(("start", ["id": "1", "payload": ["data": "{not json"]])) == .send(bad))
        #expect(
            machine.receive(("start", ["payload": [:]]))
                == .send(AppSyncStateMachine.error(nil, "BadRequestException", "start needs an id")))
    }

    @Test("AppSync: the connection's key, or each start's own authorization")
    func appSyncKeys() throws {
        var refused = AppSyncStateMachine(authenticator: Self.keyed("k"), handshake: .init(apiKey: "no"))
        guard case .close(_, let code, let reason) = refused.receive(("connection_init", [:])) else {
            Issue.record("wrong connection credentials must close")
            return
        }
        #expect(code == 4403 && reason == "Forbidden")

        var machine = AppSyncStateMachine(authenticator: Self.keyed("k"), handshake: .init(apiKey: "k"))
        #expect(machine.receive(("connection_init", [:])) == .acknowledge)
        #expect(machine.receive(try Self.appSyncStart()) == .run(id: "1", request: Self.request))
        #expect(
            machine.receive(try Self.appSyncStart("2", authorization: ["x-api-key": "wrong"]))
                == .send(AppSyncStateMachine.error("2", "UnauthorizedException", "Permission denied")))
        #expect(
            machine.receive(try Self.appSyncStart("3", authorization: ["x-api-key": "k"]))
                == .run(id: "3", request: Self.request))
    }
}
