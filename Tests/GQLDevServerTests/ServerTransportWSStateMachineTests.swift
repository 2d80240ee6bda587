import GQLCore
import Testing

@testable import GQLDevServer

/// The graphql-transport-ws rules without a socket: messages in, actions out.
@Suite("graphql-transport-ws state machine")
struct ServerTransportWSStateMachineTests {
    typealias Machine = TransportWSStateMachine

    static func machine(apiKey: String? = nil, handshake: DevAuthenticator.Credentials = .init()) -> Machine {
        Machine(authenticator: DevAuthenticator(apiKey: apiKey, adminSecret: nil), handshake: handshake)
    }

    static let subscribe: GQLValues = ["type": "subscribe", "id": "1", "payload": ["query": "{ a }"]]

    @Test("init is acknowledged once; a second one closes 4429")
    func initOnce() {
        var machine = Self.machine()
        #expect(machine.initTimeoutElapsed() == .close(code: 4408, reason: "Connection initialisation timeout"))
        #expect(machine.receive(["type": "connection_init"]) == .send(["type": "connection_ack"]))
        #expect(machine.isAcknowledged)
        #expect(machine.initTimeoutElapsed() == .none)
        #expect(
            machine.receive(["type": "connection_init"])
                == .close(code: 4429, reason: "Too many initialisation requests"))
    }

    @Test("subscribe before the ack closes 4401; after it, runs the request")
    func subscribeNeedsAck() {
        var early = Self.machine()
        #expect(early.receive(Self.subscribe) == .close(code: 4401, reason: "Unauthorized"))
        var machine = Self.machine()
        _ = machine.receive(["type": "connection_init", "payload": [:]])
        #expect(machine.receive(Self.subscribe) == .run(id: "1", request: .init(query: "{ a }")))
        #expect(machine.receive(["type": "complete", "id": "1"]) == .stop(id: "1"))
    }

    @Test("ping gets pong, pong nothing")
    func pingPong() {
        var machine = Self.machine()
        #expect(machine.receive(["type": "ping", "payload": ["x": 1]]) == .send(["type": "pong"]))
        #expect(machine.receive(["type": "pong"]) == .none)
    }

    @Test("credentials: from the payload, or the handshake; wrong ones close 4403")
    func credentials() {
        var wrong = Self.machine(apiKey: "k")
        #expect(
            wrong.receive(["type": "connection_init", "payload": ["x-api-key": "no"]])
                == .close(code: 4403, reason: "Forbidden"))
        #expect(!wrong.isAcknowledged)
        var payload = Self.machine(apiKey: "k")
        #expect(
            payload.receive(["type": "connection_init", "payload": ["x-api-key": "k"]])
                == .send(["type": "connection_ack"]))
        var handshake = Self.machine(apiKey: "k", handshake: .init(apiKey: "k"))
        #expect(handshake.receive(["type": "connection_init"]) == .send(["type": "connection_ack"]))
    }

    @Test(
        "malformed messages close 4400",
        arguments: [
            nil, ["id": "1"], ["type": "shout"], ["type": "complete"],
            ["type": "connection_init", "payload": "text"],
        ] as [GQLValues?])
    func malformed(message: GQLValues?) {
        var machine = Self.machine()
        guard case .close(let code, _) = machine.receive(message) else {
            Issue.record("expected a close for \(String(describing: message))")
            return
        }
        #expect(code == 4400)
    }

    @Test("a subscribe without an id or query closes 4400")
    func badSubscribe() {
        var machine = Self.machine()
        _ = machine.receive(["type": "connection_init"])
        for message: GQLValues in [
            ["type": "subscribe", "payload": ["query": "{ a }"]],
            ["type": "subscribe", "id": "1", "payload": ["variables": [:]]],
            ["type": "subscribe", "id": "1", "payload": ["query": "{ a }", "variables": [1]]],
        ] {
            guard case .close(let code, _) = machine.receive(message) else {
                Issue.record("expected a close for \(message)")
                continue
            }
            #expect(code == 4400)
        }
        #expect(Machine.duplicate("1") == .close(code: 4409, reason: "Subscriber for 1 already exists"))
    }
}
