import GQLCore
import Testing

@testable import GQLDevServer

@Suite("GQLDevServer over AppSync real-time", .timeLimit(.minutes(1)))
struct ServerAppSyncTests {
    static var configuration: GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-key"
        configuration.appSyncConnectionTimeoutMilliseconds = 12345
        return configuration
    }

    static func header(_ key: String) -> GQLValue {
        ["host": "localhost", "x-amz-date": "20260101T000000Z", "x-api-key": .string(key)]
    }

    static func start(_ id: String, _ query: String, key: String = "da2-key") throws -> GQLValue {
        let data = try GQLValue.object(["query": .string(query), "variables": [:]]).jsonString()
        return [
            "type": "start", "id": .string(id),
            "payload": ["data": .string(data), "extensions": ["authorization": header(key)]],
        ]
    }

    @Test("header parameter: ack with connectionTimeoutMs, ka, start_ack, data, stop → complete")
    func happyPath() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let url = endpoints.webSocket + "?header=\(try base64JSON(Self.header("da2-key")))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                let ack = try await socket.receive()
                let ka = try await socket.receive()
                try await socket.send(try Self.start("sub-1", ObjectsAPI.onCreate))
                // start_ack goes out once the subscription is registered: a change committed now reaches it.
                let startAck = try await socket.receiveSkippingKeepAlive()
                let mutation = try await post(
                    endpoints.http, ObjectsAPI.createRequest("id-1", "over HTTP"), headers: ["x-api-key": "da2-key"])
                #expect(mutation.status == 200 && mutation.json == ObjectsAPI.created("id-1", "over HTTP"))
                let event = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "stop", "id": "sub-1"])
                let complete = try await socket.receiveSkippingKeepAlive()
                return [ack, ka, startAck, event, complete].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0] == ["type": "connection_ack", "payload": ["connectionTimeoutMs": 12345]])
            #expect(seen[1] == ["type": "ka"])
            #expect(seen[2] == ["type": "start_ack", "id": "sub-1"])
            #expect(
                seen[3] == ["type": "data", "id": "sub-1", "payload": ObjectsAPI.createdEvent("id-1", "over HTTP")])
            #expect(seen[4] == ["type": "complete", "id": "sub-1"])
        }
    }

    @Test("header-<base64url> subprotocol entry is accepted")
    func headerSubprotocol() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let entry = "header-" + (try base64JSON(Self.header("da2-key"), urlSafe: true))
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-ws, \(entry)") { socket in
                try await socket.send(["type": "connection_init"])
                return try await socket.receive()
            }
            #expect(outcome.result??["type"] == "connection_ack")
            #expect(outcome.result??["payload"]?["connectionTimeoutMs"] == 12345)
        }
    }

    @Test("the realtime path serves AppSync too")
    func realtimePath() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let url = endpoints.webSocket + "/realtime?header=\(try base64JSON(Self.header("da2-key")))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                return try await socket.receive()
            }
            #expect(outcome.result??["type"] == "connection_ack")
        }
    }

    @Test("a wrong key in the header gets connection_error with errorCode 401")
    func wrongHeaderKey() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let url = endpoints.webSocket + "?header=\(try base64JSON(Self.header("da2-wrong")))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                return try await socket.drain()
            }
            let seen = try #require(outcome.result)
            #expect(seen.count == 1 && seen.first?["type"] == "connection_error")
            let error = seen.first?["payload"]?["errors"]?[0]
            #expect(error?["errorCode"] == 401 && error?["errorType"] == "UnauthorizedException")
            #expect(outcome.closeCode == 4403)
        }
    }

    @Test("start errors use AppSync's shape")
    func startErrors() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let url = endpoints.webSocket + "?header=\(try base64JSON(Self.header("da2-key")))&payload=e30="
            let outcome = try await withWebSocket(url, protocols: "graphql-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receiveSkippingKeepAlive()
                try await socket.send(try Self.start("a", ObjectsAPI.onCreate, key: "da2-wrong"))
                let unauthorized = try await socket.receiveSkippingKeepAlive()
                try await socket.send(try Self.start("b", ObjectsAPI.list))
                let unsupported = try await socket.receiveSkippingKeepAlive()
                try await socket.send(try Self.start("c", "subscription { onCreateObjects { nope } }"))
                let refused = try await socket.receiveSkippingKeepAlive()
                try await socket.send(["type": "start", "id": "d", "payload": ["data": ["query": "not a string"]]])
                let badData = try await socket.receiveSkippingKeepAlive()
                try await socket.send(try Self.start("e", "subscription { onCreateObjects { objectId }"))
                let unparsable = try await socket.receiveSkippingKeepAlive()
                return [unauthorized, unsupported, refused, badData, unparsable].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0]["type"] == "error" && seen[0]["id"] == "a")
            #expect(seen[0]["payload"]?["errors"]?[0]?["errorType"] == "UnauthorizedException")
            #expect(seen[1]["payload"]?["errors"]?[0]?["errorType"] == "UnsupportedOperation")
            #expect(
                seen[2] == [
                    "type": "error", "id": "c",
                    "payload": [
                        "errors": [
                            [
                                "message": #"Cannot query field "nope" on type "Objects"."#,
                                "locations": [["line": 1, "column": 34, "sourceName": .null]],
                            ]
                        ]
                    ],
                ])
            #expect(seen[3]["id"] == "d" && seen[3]["payload"]?["errors"]?[0]?["errorType"] == "BadRequestException")
            // A document that does not parse is refused with its syntax error, in AppSync's error shape.
            #expect(seen[4]["type"] == "error" && seen[4]["id"] == "e")
            #expect(seen[4]["payload"]?["errors"]?[0]?["message"]?.stringValue?.contains("Syntax Error") == true)
        }
    }
}
