import Foundation
import GQLDevServer
import Testing

@testable import GQLNet

/// `GQLServer` subscriptions and socket operations against a `GQLDevServer` in-process, over every protocol.
@Suite("GQLServer over WebSocket")
struct GQLServerWebSocketTests {
    static let create = "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let onCreate = "subscription { onCreateObjects { objectId text } }"
    static let get = "query($id: ID!) { getObjects(objectId: $id) { objectId text } }"

    /// A client of `running` speaking `kind` (AppSync through its API-key constructor).
    static func client(
        _ running: RunningDevServer, _ kind: GQLServer.WebSocketProtocol, key: String? = nil,
        configuration: GQLServer.Configuration = .init()
    ) -> GQLServer {
        switch kind {
        case .appSync:
            GQLServer(
                AppSync: running.endpoints.http, key: key, realtime: running.endpoints.webSocket,
                configuration: configuration)
        default:
            GQLServer(
                HTTP: running.endpoints.http, WebSocket: running.endpoints.webSocket, protocol: kind,
                headers: key.map { ["x-api-key": $0] } ?? [:], configuration: configuration,
                connectionPayload: key.map { key in { @Sendable in ["x-api-key": .string(key)] } })
        }
    }

    @Test(arguments: GQLServer.WebSocketProtocol.allCases)
    func subscriptionDeliversEvents(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, kind)) { server in
                let events = firstElements(2, of: server.subscription(Self.onCreate))
                try #require(await running.waitForSubscriptions(1))
                for (id, text) in [("s1", "first"), ("s2", #"with "quotes" and \ backslash"#)] {
                    let made = try await server.mutation(Self.create, ["input": ["objectId": id, "text": text]])
                    #expect(made.errors.isEmpty)
                }
                let received = try await events.value
                #expect(received.map { $0.data?["onCreateObjects"]?["objectId"] } == ["s1", "s2"])
                #expect(received.last?.data?["onCreateObjects"]?["text"] == #"with "quotes" and \ backslash"#)
                #expect(await running.waitForSubscriptions(0))
            }
        }
    }

    @Test(arguments: [GQLServer.WebSocketProtocol.graphqlTransportWS, .appSync])
    func subscriptionVariablesAndMultiplexing(_ kind: GQLServer.WebSocketProtocol) async throws {
        let filtered = """
            subscription($text: String) { onCreateObjects(filter: {text: {eq: $text}}) { objectId text } }
            """
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, kind)) { server in
                var states = server.connectionStates.makeAsyncIterator()  // observing from before the first use
                let red = firstElements(2, of: server.subscription(filtered, ["text": "red"]))
                let blue = firstElements(1, of: server.subscription(filtered, ["text": "blue"]))
                let all = firstElements(3, of: server.subscription(Self.onCreate))
                try #require(await running.waitForSubscriptions(3))
                for (id, text) in [("m1", "red"), ("m2", "blue"), ("m3", "red")] {
                    _ = try await server.mutation(Self.create, ["input": ["objectId": id, "text": text]])
                }
                let ids = { (results: [GQLResult]) in results.map { $0.data?["onCreateObjects"]?["objectId"] } }
                #expect(ids(try await red.value) == ["m1", "m3"])
                #expect(ids(try await blue.value) == ["m2"])
                #expect(ids(try await all.value) == ["m1", "m2", "m3"])
                // One connection carried the three.
                var history: [GQLServer.ConnectionState] = []
                while let state = await states.next() {
                    history.append(state)
                    if state == .connected { break }
                }
                #expect(history == [.disconnected, .connecting, .connected])
            }
        }
    }

    @Test(arguments: [GQLServer.WebSocketProtocol.graphqlTransportWS, .graphqlWS])
    func queriesAndMutationsOverAWebSocketOnlyServer(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withRunningDevServer { running in
            try await withClient(GQLServer(WebSocket: running.endpoints.webSocket, protocol: kind)) { server in
                #expect(server.url == nil)
                let made = try await server.mutation(Self.create, ["input": ["objectId": "w1", "text": "socket"]])
                #expect(made.data == ["createObjects": ["objectId": "w1", "text": "socket"]])
                let read = try await server.query(
                    GQLServerHTTPTests.Object.self, Self.get, ["id": "w1"], at: "getObjects")
                #expect(read == .init(objectId: "w1", text: "socket"))
                let batch = try await server.batch([
                    (query: Self.get, variables: ["id": "w1"]), (query: "{ nope }", variables: [:]),
                ])
                #expect(batch.count == 2)
                #expect(batch[0].data?["getObjects"]?["text"] == "socket")
                #expect(server.connectionState == .connected)
            }
        }
    }
}
