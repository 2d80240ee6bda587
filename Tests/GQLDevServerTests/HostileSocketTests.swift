import GQLCore
import Testing

@testable import GQLDevServer

/// The hostile documents of ``HostileDocumentTests`` over each WebSocket protocol, and more operations than a
/// socket may run: each refused in the protocol's own `error` shape, and the socket serves on afterwards.
@Suite("GQLDevServer refuses hostile operations on WebSockets", .timeLimit(.minutes(2)))
struct HostileSocketTests {
    static let deepSelection = "subscription " + HostileDocumentTests.nestedSelection(900)
    static let deepList =
        "subscription { onCreateObjects(filter: {number: {in: \(HostileDocumentTests.nestedList(70))}}) { objectId } }"

    @Test("graphql-transport-ws: a 900-deep subscribe and a 70-deep list get error, then a query runs")
    func transportWS() async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()
                var seen: [GQLValue] = []
                for (id, query) in [("1", Self.deepSelection), ("2", Self.deepList), ("3", ObjectsAPI.list)] {
                    try await socket.send([
                        "type": "subscribe", "id": .string(id), "payload": ["query": .string(query)],
                    ])
                    seen.append(try #require(try await socket.receive()))
                }
                return seen
            }
            let seen = try #require(outcome.result)
            #expect(seen[0]["type"] == "error" && seen[0]["id"] == "1")
            #expect(seen[0]["payload"]?[0]?["extensions"]?["code"] == "DEPTH_LIMIT_EXCEEDED")
            #expect(seen[1]["type"] == "error" && seen[1]["id"] == "2")
            #expect(seen[1]["payload"]?[0]?["extensions"]?["code"] == "VALUE_DEPTH_LIMIT_EXCEEDED")
            #expect(seen[2] == ["type": "next", "id": "3", "payload": ObjectsAPI.listed([])])
        }
    }

    @Test("legacy graphql-ws: hostile starts get error, then a query runs")
    func legacyWS() async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                var seen: [GQLValue] = []
                for (id, query) in [("1", Self.deepSelection), ("2", Self.deepList), ("3", ObjectsAPI.list)] {
                    try await socket.send(["type": "start", "id": .string(id), "payload": ["query": .string(query)]])
                    seen.append(try #require(try await socket.receiveSkippingKeepAlive()))
                }
                return seen
            }
            let seen = try #require(outcome.result)
            #expect(seen[0]["type"] == "error" && seen[0]["payload"]?["extensions"]?["code"] == "DEPTH_LIMIT_EXCEEDED")
            #expect(
                seen[1]["type"] == "error" && seen[1]["payload"]?["extensions"]?["code"] == "VALUE_DEPTH_LIMIT_EXCEEDED"
            )
            #expect(seen[2] == ["type": "data", "id": "3", "payload": ObjectsAPI.listed([])])
        }
    }

    @Test("AppSync: hostile starts get AppSync errors, then a subscription starts")
    func appSync() async throws {
        try await withDevServer { _, endpoints in
            let header = try base64JSON(["host": "localhost"])
            let url = endpoints.webSocket + "?header=\(header)&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                var seen: [GQLValue] = []
                for (id, query) in [("1", Self.deepSelection), ("2", Self.deepList), ("3", ObjectsAPI.onCreate)] {
                    let data = try GQLValue.object(["query": .string(query)]).jsonString()
                    try await socket.send(["type": "start", "id": .string(id), "payload": ["data": .string(data)]])
                    seen.append(try #require(try await socket.receiveSkippingKeepAlive()))
                }
                return seen
            }
            let seen = try #require(outcome.result)
            #expect(
                seen[0]["type"] == "error" && seen[0]["payload"]?["errors"]?[0]?["errorType"] == "LimitExceededError")
            #expect(seen[1]["payload"]?["errors"]?[0]?["extensions"]?["code"] == "VALUE_DEPTH_LIMIT_EXCEEDED")
            #expect(seen[2] == ["type": "start_ack", "id": "3"])
        }
    }

    @Test("a socket runs at most maxSubscriptionsPerSocket operations; a stopped one frees its place")
    func subscriptionsPerSocket() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.maxSubscriptionsPerSocket = 2
        try await withDevServer(configuration) { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()
                for id in ["1", "2"] {
                    try await socket.send([
                        "type": "subscribe", "id": .string(id), "payload": ["query": .string(ObjectsAPI.onCreate)],
                    ])
                }
                try #require(await server.waitForSubscriptions(2))
                try await socket.send([
                    "type": "subscribe", "id": "3", "payload": ["query": .string(ObjectsAPI.onCreate)],
                ])
                let refused = try #require(try await socket.receive())
                try await socket.send(["type": "complete", "id": "1"])
                try #require(await server.waitForSubscriptions(1))
                try await socket.send([
                    "type": "subscribe", "id": "4", "payload": ["query": .string(ObjectsAPI.onCreate)],
                ])
                let running = await server.waitForSubscriptions(2)
                return [refused, .bool(running)]
            }
            let seen = try #require(outcome.result)
            #expect(seen[0]["type"] == "error" && seen[0]["id"] == "3")
            #expect(seen[0]["payload"]?[0]?["extensions"]?["code"] == "SUBSCRIPTION_LIMIT_EXCEEDED")
            #expect(seen[1] == true)
        }
    }
}
