import GQLCore
import Testing

@testable import GQLDevServer

@Suite("GQLDevServer over legacy graphql-ws", .timeLimit(.minutes(1)))
struct ServerLegacyWSTests {
    static let subprotocol = "graphql-ws"

    @Test("ack then ka, start/data/complete for queries, data then stop → complete for subscriptions, terminate")
    func happyPath() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.keepAliveInterval = .milliseconds(50)
        try await withDevServer(configuration) { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "connection_init", "payload": [:]])
                let ack = try await socket.receive()
                let firstKA = try await socket.receive()
                let secondKA = try await socket.receive()  // the periodic one
                try await socket.send(["type": "start", "id": "q", "payload": ["query": .string(ObjectsAPI.list)]])
                let data = try await socket.receiveSkippingKeepAlive()
                let complete = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "start", "id": "s", "payload": ["query": .string(ObjectsAPI.onCreate)]])
                try #require(await server.waitForSubscriptions(1))
                _ = try await post(endpoints.http, ObjectsAPI.createRequest("e", "event"))
                let event = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "stop", "id": "s"])
                let stopped = try await socket.receiveSkippingKeepAlive()
                let unsubscribed = await server.waitForSubscriptions(0)
                try await socket.send(["type": "connection_terminate"])
                _ = try await socket.drain()
                return [ack, firstKA, secondKA, data, complete, event, stopped, .bool(unsubscribed)].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0] == ["type": "connection_ack"])
            #expect(seen[1] == ["type": "ka"] && seen[2] == ["type": "ka"])
            #expect(seen[3] == ["type": "data", "id": "q", "payload": ObjectsAPI.listed([])])
            #expect(seen[4] == ["type": "complete", "id": "q"])
            #expect(seen[5] == ["type": "data", "id": "s", "payload": ObjectsAPI.createdEvent("e", "event")])
            #expect(seen[6] == ["type": "complete", "id": "s"])
            #expect(seen[7] == true)  // stop ended the engine's subscription
            #expect(outcome.closeCode == 1000)
        }
    }

    @Test("a mutation over the socket reaches a subscription on another socket")
    func mutationReachesSubscriber() async throws {
        try await withDevServer { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "start", "id": "s", "payload": ["query": .string(ObjectsAPI.onCreate)]])
                try #require(await server.waitForSubscriptions(1))
                let writer = try await withWebSocket(endpoints.webSocket, protocols: Self.subprotocol) { other in
                    try await other.send(["type": "connection_init"])
                    _ = try await other.receiveSkippingKeepAlive()
                    try await other.send(["type": "start", "id": "m", "payload": ObjectsAPI.createRequest("x", "y")])
                    return try await other.receiveSkippingKeepAlive()
                }
                #expect(writer.result == ["type": "data", "id": "m", "payload": ObjectsAPI.created("x", "y")])
                return try await socket.receiveSkippingKeepAlive()
            }
            #expect(outcome.result == ["type": "data", "id": "s", "payload": ObjectsAPI.createdEvent("x", "y")])
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
                try await socket.send(["type": "start", "id": "1", "payload": ["query": .string(ObjectsAPI.list)]])
                let early = try await socket.receive()
                try await socket.send(["type": "dance", "id": "2"])
                let unknown = try await socket.receive()
                try await socket.sendText("{")
                let unreadable = try await socket.receive()
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()  // connection_ack
                _ = try await socket.receive()  // the first ka
                try await socket.send(["type": "start", "id": "3", "payload": ["query": "{ listObjects {"]])
                let unparsableData = try await socket.receive()
                let unparsableComplete = try await socket.receive()
                return [early, unknown, unreadable, unparsableData, unparsableComplete].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            // Like the reference server, a document that does not parse gets its errors as data, then complete.
            #expect(seen[3]["type"] == "data" && seen[3]["id"] == "3")
            #expect(seen[3]["payload"]?["errors"]?[0]?["message"]?.stringValue?.contains("Syntax Error") == true)
            #expect(seen[4] == ["type": "complete", "id": "3"])
            #expect(seen[0]["type"] == "error" && seen[0]["id"] == "1")
            #expect(seen[1]["type"] == "error" && seen[1]["id"] == "2")
            #expect(seen[2]["type"] == "connection_error")
            #expect(outcome.closeCode == 1000)  // the server's answer to the client's close
        }
    }
}
