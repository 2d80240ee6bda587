import Foundation
import GQLCore
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
                #expect(batch[1].data == nil)
                #expect(batch[1].errors.first?.message.contains("nope") == true)
                // Validation errors come back in the result, as over HTTP.
                let invalid = try await server.query("{ nope }")
                #expect(invalid.errors.first?.message.contains("nope") == true)
                // Without connect(), each operation's connection closes when it is done.
                #expect(server.connectionState == .disconnected)
            }
        }
    }

    @Test(arguments: GQLServer.WebSocketProtocol.allCases)
    func serverRestartMidSubscriptionReconnectsAndResubscribes(_ kind: GQLServer.WebSocketProtocol) async throws {
        let first = try await RunningDevServer.start()
        var configuration = GQLServer.Configuration()
        configuration.reconnect = .init(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        let calls = GQLLocked(0)
        let server =
            kind == .appSync
            ? GQLServer(
                AppSync: first.endpoints.http, key: nil, realtime: first.endpoints.webSocket,
                configuration: configuration,
                connectionPayload: {
                    calls.withLock { $0 += 1 }
                    return [:]
                })
            : GQLServer(
                HTTP: first.endpoints.http, WebSocket: first.endpoints.webSocket, protocol: kind,
                configuration: configuration,
                connectionPayload: {
                    calls.withLock { $0 += 1 }
                    return [:]
                })
        try await withClient(server) { server in
            var states = server.connectionStates.makeAsyncIterator()
            let received = GQLLocked<[GQLValue?]>([])
            let events = Task {
                for try await event in server.subscription(Self.onCreate) {
                    let count = received.withLock {
                        $0.append(event.data?["onCreateObjects"]?["objectId"])
                        return $0.count
                    }
                    if count == 2 { break }
                }
            }
            try #require(await first.waitForSubscriptions(1))
            _ = try await server.mutation(Self.create, ["input": ["objectId": "before", "text": "1"]])
            // The event must have arrived before the server stops: one still on its way when the socket closes is
            // lost (no protocol replays them), which is not what this test is about.
            let deadline = ContinuousClock.now + .seconds(60)
            while received.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            try #require(received.withLock { $0.count } == 1)
            await first.stop()

            var seen: [GQLServer.ConnectionState] = []
            while let state = await states.next() {
                seen.append(state)
                if case .reconnecting = state { break }
            }
            let second = try await RunningDevServer.start(port: first.port)
            while let state = await states.next() {
                seen.append(state)
                if state == .connected, seen.filter({ $0 == .connected }).count == 2 { break }
            }
            #expect(await second.waitForSubscriptions(1))
            _ = try await server.mutation(Self.create, ["input": ["objectId": "after", "text": "2"]])
            try await events.value
            await second.stop()
            #expect(received.withLock { $0 } == ["before", "after"])
            #expect(seen.first == .disconnected)
            #expect(seen.contains(.connected))
            // The payload provider ran for every connection, so a refreshed token would have been sent.
            #expect(calls.withLock { $0 } >= 2)
        }
    }

    /// Starts a subscription and returns the connection states seen until the second `connected`, with the
    /// subscription's task (to cancel).
    static func statesUntilReconnected(_ server: GQLServer) async -> (
        [GQLServer.ConnectionState], Task<[GQLResult], any Error>
    ) {
        var states = server.connectionStates.makeAsyncIterator()
        let subscription = firstElements(1, of: server.subscription(onCreate))
        var seen: [GQLServer.ConnectionState] = []
        while let state = await states.next() {
            seen.append(state)
            if seen.filter({ $0 == .connected }).count == 2 { break }
        }
        return (seen, subscription)
    }

    @Test func silentLegacyServerIsDroppedAfterTheKeepAliveTimeout() async throws {
        var devConfiguration = GQLDevServer.Configuration()
        devConfiguration.keepAliveInterval = .seconds(60)
        try await withRunningDevServer(devConfiguration) { running in
            var configuration = GQLServer.Configuration()
            configuration.keepAliveTimeout = .milliseconds(200)
            configuration.reconnect = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20))
            try await withClient(Self.client(running, .graphqlWS, configuration: configuration)) { server in
                let (seen, subscription) = await Self.statesUntilReconnected(server)
                #expect(Array(seen.prefix(3)) == [.disconnected, .connecting, .connected])
                guard case .reconnecting(let attempt, _) = seen[3] else {
                    Issue.record("expected a reconnect after the keep-alive timeout, saw \(seen)")
                    return
                }
                #expect(attempt == 1)
                subscription.cancel()
            }
        }
    }

    @Test func appSyncConnectionTimeoutFromTheAckIsEnforced() async throws {
        var devConfiguration = GQLDevServer.Configuration()
        devConfiguration.keepAliveInterval = .seconds(60)
        devConfiguration.appSyncConnectionTimeoutMilliseconds = 200
        try await withRunningDevServer(devConfiguration) { running in
            var configuration = GQLServer.Configuration()
            configuration.keepAliveTimeout = .seconds(600)  // the ack's connectionTimeoutMs wins for AppSync
            configuration.reconnect = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20))
            try await withClient(Self.client(running, .appSync, configuration: configuration)) { server in
                let (seen, subscription) = await Self.statesUntilReconnected(server)
                #expect(Array(seen.prefix(3)) == [.disconnected, .connecting, .connected])
                #expect(seen.contains { if case .reconnecting = $0 { true } else { false } })
                subscription.cancel()
            }
        }
    }

    @Test(arguments: GQLServer.WebSocketProtocol.allCases)
    func refusedCredentialsEndWithAnAuthorizationError(_ kind: GQLServer.WebSocketProtocol) async throws {
        var devConfiguration = GQLDevServer.Configuration()
        devConfiguration.apiKey = "right-key"
        try await withRunningDevServer(devConfiguration) { running in
            try await withClient(Self.client(running, kind, key: "wrong-key")) { server in
                let error = await #expect(throws: GQLError.self) { try await server.connect() }
                #expect(error?.code == .unauthorized)
                #expect(error?.message.contains("wrong-key") == false)
                guard case .failed(let stateError) = server.connectionState else {
                    Issue.record("state is \(server.connectionState), not failed")
                    return
                }
                #expect(stateError.code == .unauthorized)
                // A subscription on the refused connection ends with the same error instead of retrying.
                let iteration = await #expect(throws: GQLError.self) {
                    for try await _ in server.subscription(Self.onCreate) {}
                }
                #expect(iteration?.code == .unauthorized)
            }
            try await withClient(Self.client(running, kind, key: "right-key")) { server in
                try await server.connect()
                #expect(server.connectionState == .connected)
                let events = firstElements(1, of: server.subscription(Self.onCreate))
                try #require(await running.waitForSubscriptions(1))
                _ = try await server.mutation(Self.create, ["input": ["objectId": "k1", "text": "keyed"]])
                #expect(try await events.value.first?.data?["onCreateObjects"]?["objectId"] == "k1")
            }
        }
    }

    @Test(arguments: GQLServer.WebSocketProtocol.allCases)
    func refusedSubscriptionThrowsItsGraphQLErrors(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, kind)) { server in
                try await server.connect()
                let failure = await #expect(throws: GQLResult.Failure.self) {
                    for try await _ in server.subscription("subscription { noSuchField }") {}
                }
                #expect(failure?.errors.first?.message.contains("noSuchField") == true)
                // connect() keeps the connection up for the next one.
                #expect(server.connectionState == .connected)
            }
        }
    }

    @Test func connectFailsFastWhenNothingListens() async throws {
        let gone = try await RunningDevServer.start()
        await gone.stop()
        try await withClient(GQLServer(WebSocket: gone.endpoints.webSocket)) { server in
            let error = await #expect(throws: GQLError.self) { try await server.connect() }
            #expect(error?.code == .connection)
            #expect(server.connectionState == .disconnected)
        }
        var configuration = GQLServer.Configuration()
        configuration.reconnect = .init(
            initialDelay: .milliseconds(5), maximumDelay: .milliseconds(10), maximumAttempts: 2)
        try await withClient(GQLServer(WebSocket: gone.endpoints.webSocket, configuration: configuration)) { server in
            let error = await #expect(throws: GQLError.self) {
                for try await _ in server.subscription(Self.onCreate) {}
            }
            #expect(error?.code == .connection)
            #expect(error?.message.contains("gave up reconnecting after 2 attempts") == true)
        }
    }

    @Test func httpOnlyServerRefusesSubscriptions() async throws {
        try await withClient(GQLServer(HTTP: "http://127.0.0.1:9/graphql")) { server in
            let error = await #expect(throws: GQLError.self) {
                for try await _ in server.subscription(Self.onCreate) {}
            }
            #expect(error?.code == .invalidArgument)
            await #expect(throws: GQLError.self) { try await server.connect() }
            #expect(server.connectionState == .disconnected)
        }
    }

    @Test func cancellingTheIteratingTaskStopsTheSubscription() async throws {
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, .graphqlTransportWS)) { server in
                let task = firstElements(100, of: server.subscription(Self.onCreate))
                try #require(await running.waitForSubscriptions(1))
                task.cancel()
                #expect(await running.waitForSubscriptions(0))
                // Nothing uses the connection any more (no connect()), so it was closed.
                #expect(server.connectionState == .disconnected)
            }
        }
    }

    /// A `connect()` cancelled while its socket is still being opened leaves no connection behind: the state goes
    /// back to disconnected and the acknowledgement that follows does not make the connection persistent (only a
    /// successful `connect()` keeps it up and reconnecting).
    @Test func aCancelledConnectLeavesNoConnectionBehind() async throws {
        try await withRunningDevServer { running in
            // The connection payload holds the socket's opening until the connect() was cancelled.
            let opening = GQLWaiter<Void>()
            let release = GQLWaiter<Void>()
            let client = GQLServer(
                WebSocket: running.endpoints.webSocket,
                connectionPayload: {
                    opening.resume(returning: ())
                    await release.wait(whenCancelled: ())
                    return [:]
                })
            try await withClient(client) { server in
                var states = server.connectionStates.makeAsyncIterator()
                let connecting = Task { try await server.connect() }
                await opening.wait(whenCancelled: ())
                connecting.cancel()
                await #expect(throws: GQLError.self) { try await connecting.value }
                release.resume(returning: ())
                // Before the fix: disconnected, connecting, connected (kept up for a connect() that gave up).
                var seen: [GQLServer.ConnectionState] = []
                while seen.count < 3, let state = await states.next() { seen.append(state) }
                #expect(seen == [.disconnected, .connecting, .disconnected])
            }
        }
    }

    @Test func completionHandlerSubscriptionAndCancel() async throws {
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, .graphqlTransportWS)) { server in
                let (events, sink) = AsyncStream<String>.makeStream()
                let id = server.subscription(Self.onCreate) { result, error in
                    sink.yield(
                        result?.data?["onCreateObjects"]?["objectId"]?.stringValue
                            ?? "end: \(String(describing: error))")
                }
                try #require(await running.waitForSubscriptions(1))
                _ = try await server.mutation(Self.create, ["input": ["objectId": "cb1", "text": "x"]])
                var iterator = events.makeAsyncIterator()
                #expect(await iterator.next() == "cb1")
                let (stopped, stoppedSink) = AsyncStream<String>.makeStream()
                server.subscription(cancel: id) { error in stoppedSink.yield(error.map { "\($0)" } ?? "stopped") }
                var stoppedIterator = stopped.makeAsyncIterator()
                #expect(await stoppedIterator.next() == "stopped")
                #expect(await running.waitForSubscriptions(0))
                server.subscription(cancel: id) { error in
                    stoppedSink.yield((error as? GQLError)?.code.description ?? "?")
                }
                #expect(await stoppedIterator.next() == "notFound")
            }
        }
    }

    @Test func oversizedSocketMessagesFailTheOperation() async throws {
        try await withRunningDevServer { running in
            var configuration = GQLServer.Configuration()
            configuration.maximumResponseSize = 300
            configuration.reconnect = .never
            try await withClient(GQLServer(WebSocket: running.endpoints.webSocket, configuration: configuration)) {
                server in
                let big = String(repeating: "x", count: 2_000)
                let error = await #expect(throws: GQLError.self) {
                    try await server.mutation(Self.create, ["input": ["objectId": "big", "text": big]])
                }
                #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
            }
        }
    }

    @Test func builtSubscriptionRuns() async throws {
        try await withRunningDevServer { running in
            try await withClient(Self.client(running, .graphqlTransportWS)) { server in
                let operation = GQLOperation.subscription("OnCreate") {
                    GQLOperation.Field("onCreateObjects") { "objectId" }
                }
                let events = firstElements(1, of: try server.subscription(operation))
                try #require(await running.waitForSubscriptions(1))
                _ = try await server.mutation(Self.create, ["input": ["objectId": "b1", "text": "built"]])
                #expect(try await events.value.first?.data == ["onCreateObjects": ["objectId": "b1"]])
                let query = GQLOperation.query { GQLOperation.Field("listObjects") { "nextToken" } }
                #expect(throws: GQLError.self) { try server.subscription(query) }
            }
        }
    }

    @Test func hasuraSecretTravelsOverHTTPAndTheSocket() async throws {
        var devConfiguration = GQLDevServer.Configuration()
        devConfiguration.adminSecret = "hasura-secret"
        try await withRunningDevServer(devConfiguration) { running in
            try await withClient(GQLServer(Hasura: running.endpoints.http, secret: "hasura-secret")) { server in
                #expect(server.webSocketURL == running.endpoints.webSocket)
                let events = firstElements(1, of: server.subscription(Self.onCreate))
                try #require(await running.waitForSubscriptions(1))
                let made = try await server.mutation(Self.create, ["input": ["objectId": "h1", "text": "hasura"]])
                #expect(made.errors.isEmpty)
                #expect(try await events.value.first?.data?["onCreateObjects"]?["objectId"] == "h1")
            }
            try await withClient(GQLServer(Hasura: running.endpoints.http, secret: "wrong")) { server in
                let error = await #expect(throws: GQLError.self) { try await server.connect() }
                #expect(error?.code == .unauthorized)
                let http = await #expect(throws: GQLError.self) {
                    try await server.query("{ listObjects { nextToken } }")
                }
                #expect(http?.httpStatus == 401)
            }
        }
    }

    @Test func shutdownEndsSubscriptionsStatesAndLaterUse() async throws {
        try await withRunningDevServer { running in
            let server = Self.client(running, .graphqlTransportWS)
            let states = Task {
                var seen: [GQLServer.ConnectionState] = []
                for await state in server.connectionStates { seen.append(state) }
                return seen
            }
            let live = firstElements(5, of: server.subscription(Self.onCreate))
            try #require(await running.waitForSubscriptions(1))
            try await server.shutdown()
            #expect(try await live.value.isEmpty)
            #expect(await states.value.last == .disconnected)
            #expect(await running.waitForSubscriptions(0))
            let later = await #expect(throws: GQLError.self) {
                for try await _ in server.subscription(Self.onCreate) {}
            }
            #expect(later?.code == .closed)
            await #expect(throws: GQLError.self) { try await server.connect() }
            var afterwards: [GQLServer.ConnectionState] = []
            for await state in server.connectionStates { afterwards.append(state) }
            #expect(afterwards == [.disconnected])
        }
    }

    @Test func socketQueriesHonourTheTimeout() async throws {
        var devConfiguration = GQLDevServer.Configuration()
        devConfiguration.faults.latencyMilliseconds = 1_500
        try await withRunningDevServer(devConfiguration) { running in
            var configuration = GQLServer.Configuration()
            configuration.timeout = .milliseconds(200)
            try await withClient(GQLServer(WebSocket: running.endpoints.webSocket, configuration: configuration)) {
                server in
                // The answer would come after 1.5 s: a timeout error (not a result) shows the limit held.
                let error = await #expect(throws: GQLError.self) {
                    try await server.query("{ listObjects { nextToken } }")
                }
                #expect(error?.code == .timeout)
                #expect(error?.operation == "query")
            }
        }
    }
}
