import GQLCore
import Testing

@testable import GQLDevServer

/// The transports over the real engine with the default `Objects` model, through the public initializer too.
@Suite("GQLDevServer end to end", .timeLimit(.minutes(1)))
struct ServerEndToEndTests {
    static let create = """
        mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text _version } }
        """

    static func createBody(_ id: String, _ text: String) -> GQLValue {
        ["query": .string(create), "variables": ["input": ["objectId": .string(id), "text": .string(text)]]]
    }

    @Test("the public initializer serves the default model over HTTP")
    func publicInitializer() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.eventLoopThreads = 2
        let server = try GQLDevServer(configuration: configuration)
        #expect(server.printedSchema.contains("createObjects"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let endpoints = try await server.endpoints()
            let created = try await post(endpoints.http, Self.createBody("p1", "public"))
            #expect(created.json?["data"]?["createObjects"]?["objectId"] == "p1")
            await server.shutdown()
            try await group.waitForAll()
        }
    }

    @Test("create by POST, read by GET, and a batch mixing both")
    func http() async throws {
        try await withDevServer { _, endpoints in
            let created = try await post(endpoints.http, Self.createBody("o1", "hello"))
            #expect(created.status == 200)
            #expect(created.json?["data"]?["createObjects"] == ["objectId": "o1", "text": "hello", "_version": 1])
            let get = try await httpRequest(
                endpoints.http
                    + "?query=query(%24id%3A%20ID!)%20%7B%20getObjects(objectId%3A%20%24id)%20%7B%20text%20%7D%20%7D"
                    + "&variables=%7B%22id%22%3A%22o1%22%7D",
                method: "GET")
            #expect(get.status == 200)
            #expect(get.json?["data"]?["getObjects"]?["text"] == "hello")
            let batch = try await post(
                endpoints.http,
                [Self.createBody("o2", "two"), ["query": "{ listObjects { items { objectId } } }"]])
            let items = batch.json?[1]?["data"]?["listObjects"]?["items"]?.arrayValue ?? []
            #expect(Set(items.compactMap { $0["objectId"]?.stringValue }) == ["o1", "o2"])
            let invalid = try await post(endpoints.http, ["query": "{ nope }"])
            #expect(invalid.status == 200 && invalid.json?["errors"] != nil)
        }
    }

    @Test("configuration.schema: a custom model over HTTP and graphql-transport-ws")
    func customSchema() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.schema = "type Counter @model { n: Int! @primaryKey, label: String }"
        try await withDevServer(configuration) { server, endpoints in
            #expect(server.printedSchema.contains("createCounter(input: CreateCounterInput!"))
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()
                try await socket.send([
                    "type": "subscribe", "id": "c",
                    "payload": ["query": "subscription { onCreateCounter { n label } }"],
                ])
                try #require(await server.waitForSubscriptions(1))
                let created = try await post(
                    endpoints.http, ["query": #"mutation { createCounter(input: {n: 7, label: "seven"}) { n label } }"#]
                )
                #expect(created.json == ["data": ["createCounter": ["n": 7, "label": "seven"]]])
                return try await socket.receive()
            }
            #expect(
                outcome.result == [
                    "type": "next", "id": "c", "payload": ["data": ["onCreateCounter": ["n": 7, "label": "seven"]]],
                ])
            let listed = try await post(endpoints.http, ["query": "{ listCounters { items { n label } } }"])
            #expect(listed.json == ["data": ["listCounters": ["items": [["n": 7, "label": "seven"]]]]])
        }
    }

    @Test("graphql-transport-ws: a subscription receives an object created over HTTP")
    func transportWSSubscription() async throws {
        try await withDevServer { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()
                try await socket.send([
                    "type": "subscribe", "id": "s",
                    "payload": ["query": "subscription { onCreateObjects { objectId text } }"],
                ])
                try #require(await server.waitForSubscriptions(1))
                _ = try await post(endpoints.http, Self.createBody("w1", "over ws"))
                let event = try await socket.receive()
                try await socket.send(["type": "complete", "id": "s"])
                return event
            }
            #expect(
                outcome.result == [
                    "type": "next", "id": "s",
                    "payload": ["data": ["onCreateObjects": ["objectId": "w1", "text": "over ws"]]],
                ])
        }
    }

    @Test("graphql-ws: a mutation over the socket reaches a subscription on it")
    func legacySubscription() async throws {
        try await withDevServer { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                try await socket.send([
                    "type": "start", "id": "s", "payload": ["query": "subscription { onCreateObjects { objectId } }"],
                ])
                try #require(await server.waitForSubscriptions(1))
                try await socket.send(["type": "start", "id": "m", "payload": Self.createBody("l1", "legacy")])
                var seen: [GQLValue] = []
                for _ in 0..<3 { seen.append(try await socket.receiveSkippingKeepAlive() ?? .null) }
                return seen
            }
            let seen = try #require(outcome.result)
            #expect(
                seen.contains(["type": "data", "id": "s", "payload": ["data": ["onCreateObjects": ["objectId": "l1"]]]])
            )
            #expect(seen.contains { $0["id"] == "m" && $0["payload"]?["data"]?["createObjects"]?["objectId"] == "l1" })
            #expect(seen.contains(["type": "complete", "id": "m"]))
        }
    }

    @Test("AppSync: start_ack, then data for an object created over HTTP, stop → complete")
    func appSyncSubscription() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-key"
        try await withDevServer(configuration) { _, endpoints in
            let header: GQLValue = ["host": "localhost", "x-api-key": "da2-key"]
            let url = endpoints.webSocket + "?header=\(try base64JSON(header))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                let data = try GQLValue.object([
                    "query": "subscription { onCreateObjects { objectId text } }", "variables": [:],
                ]).jsonString()
                try await socket.send([
                    "type": "start", "id": "a",
                    "payload": ["data": .string(data), "extensions": ["authorization": header]],
                ])
                let startAck = try await socket.receiveSkippingKeepAlive()
                _ = try await post(endpoints.http, Self.createBody("a1", "appsync"), headers: ["x-api-key": "da2-key"])
                let event = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "stop", "id": "a"])
                let complete = try await socket.receiveSkippingKeepAlive()
                return [startAck, event, complete].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0] == ["type": "start_ack", "id": "a"])
            #expect(
                seen[1] == [
                    "type": "data", "id": "a",
                    "payload": ["data": ["onCreateObjects": ["objectId": "a1", "text": "appsync"]]],
                ])
            #expect(seen[2] == ["type": "complete", "id": "a"])
        }
    }

    @Test("AppSync: an invalid subscription gets AppSync's error shape")
    func appSyncInvalidSubscription() async throws {
        try await withDevServer { _, endpoints in
            let url = endpoints.webSocket + "?header=\(try base64JSON(["host": "localhost"]))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                let data = try GQLValue.object(["query": "subscription { onNothing { id } }"]).jsonString()
                try await socket.send(["type": "start", "id": "x", "payload": ["data": .string(data)]])
                return try await socket.receiveSkippingKeepAlive()
            }
            let error = outcome.result??["payload"]?["errors"]?[0]
            #expect(outcome.result??["type"] == "error" && outcome.result??["id"] == "x")
            #expect(error?["message"]?.stringValue?.isEmpty == false)
        }
    }
}
