import GQLCore
import Testing

@testable import GQLDevServer

@Suite("GQLDevServer over legacy graphql-ws", .timeLimit(.minutes(1)))
struct ServerLegacyWSTests {
    static let subprotocol = "graphql-ws"

    @Test("ack then ka, start/data/complete for queries, stop → complete for subscriptions, terminate")
    func happyPath() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.keepAliveInterval = .milliseconds(50)
        try await withDevServer(configuration) { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "connection_init", "payload": [:]])
                let ack = try await socket.receive()
                let firstKA = try await socket.receive()
                let secondKA = try await socket.receive()  // the periodic one
                try await socket.send(["type": "start", "id": "q", "payload": ["query": "query { echo }"]])
                let data = try await socket.receiveSkippingKeepAlive()
                let complete = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "start", "id": "s", "payload": ["query": "subscription { on }"]])
                let tick = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "stop", "id": "s"])
                let stopped = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "connection_terminate"])
                _ = try await socket.drain()
                return [ack, firstKA, secondKA, data, complete, tick, stopped].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0] == ["type": "connection_ack"])
            #expect(seen[1] == ["type": "ka"] && seen[2] == ["type": "ka"])
            #expect(seen[3]["type"] == "data" && seen[3]["id"] == "q" && seen[3]["payload"]?["data"]?["echo"] != nil)
            #expect(seen[4] == ["type": "complete", "id": "q"])
            #expect(seen[5] == ["type": "data", "id": "s", "payload": ["data": ["tick": 0]]])
            #expect(seen[6] == ["type": "complete", "id": "s"])
            #expect(outcome.closeCode == 1000)
        }
    }

    @Test("a mutation over the socket reaches a subscription on another socket")
    func mutationReachesSubscriber() async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "start", "id": "s", "payload": ["query": "subscription { on }"]])
                _ = try await socket.receiveSkippingKeepAlive()  // tick
                let writer = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { other in
                    try await other.send(["type": "connection_init"])
                    _ = try await other.receiveSkippingKeepAlive()
                    try await other.send([
                        "type": "start", "id": "m", "payload": ["query": "mutation { m }", "variables": ["x": "y"]],
                    ])
                    return try await other.receiveSkippingKeepAlive()
                }
                #expect(writer.result??["type"] == "data")
                return try await socket.receiveSkippingKeepAlive()
            }
            #expect(outcome.result == ["type": "data", "id": "s", "payload": ["data": ["event": ["x": "y"]]]])
        }
    }

    @Test("bad credentials get connection_error and a close")
    func badCredentials() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-key"
        try await withDevServer(configuration) { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "connection_init", "payload": ["x-api-key": "nope"]])
                return try await socket.drain()
            }
            let seen = try #require(outcome.result)
            #expect(seen.count == 1 && seen.first?["type"] == "connection_error")
            #expect(outcome.closeCode == 4403)
        }
    }

    @Test("start before init and unknown types get error; the socket stays open")
    func errors() async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "start", "id": "1", "payload": ["query": "{ echo }"]])
                let early = try await socket.receive()
                try await socket.send(["type": "dance", "id": "2"])
                let unknown = try await socket.receive()
                try await socket.sendText("{")
                let unreadable = try await socket.receive()
                return [early, unknown, unreadable].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0]["type"] == "error" && seen[0]["id"] == "1")
            #expect(seen[1]["type"] == "error" && seen[1]["id"] == "2")
            #expect(seen[2]["type"] == "connection_error")
            #expect(outcome.closeCode == 1000)  // the server's answer to the client's close
        }
    }
}
