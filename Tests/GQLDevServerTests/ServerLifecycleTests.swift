import GQLCore
import Testing

@testable import GQLDevServer

@Suite("GQLDevServer lifecycle and faults", .timeLimit(.minutes(1)))
struct ServerLifecycleTests {
    /// A client pipelines mutations and does not read the answers; the server stops once the socket and its
    /// buffers are full (the router's path holds more answers first). A graceful shutdown then must not drop the answers written but not yet sent: every applied
    /// mutation's answer arrives, whole, before the end of the stream. (Before, a full close after the last answer
    /// was written dropped what NIO still held; and the direct path read and ran requests after the shutdown began,
    /// then closed with the client's input unread, so the kernel reset the connection and discarded the last answer
    /// or two it had not sent.)
    @Test(
        "a graceful shutdown sends the answers the client has not read yet, on the direct and the usual path",
        arguments: [false, true])
    func shutdownSendsUnreadAnswers(usualPath: Bool) async throws {
        try await withDevServer { server, endpoints in
            let engine = try #require(server.devEngine)
            let wire = try AttackWire(port: try HostileHTTPTests.port(endpoints), receiveBuffer: 4096)
            let headers =
                "Content-Type: application/json\r\n"
                + (usualPath ? "\(usualPathConnection.name): \(usualPathConnection.value)\r\n" : "")
            var requests: [UInt8] = []
            // Large answers, so that the operating system's socket buffers cannot take them all.
            let large = String(repeating: "x", count: 16_000)
            for index in 0..<600 {
                let text =
                    #"mutation { createObjects(input: {objectId: "o\#(index)", text: "\#(large)"}) { objectId text } }"#
                requests += Array(try DirectHTTPAttackTests.query(text, headers: headers).utf8)
            }
            let sending = Task { await wire.send(requests, timeout: 1) }
            // Wait until the server has stopped: no mutation applied for a while.
            func applied() throws -> Int {
                Int(try engine.database.fetchRows(sql: "SELECT COUNT(*) FROM Objects").rows.first?.first?.intValue ?? 0)
            }
            var last = -1
            while try applied() != last {
                last = try applied()
                try await Task.sleep(for: .milliseconds(300))
            }
            let stopping = Task { await server.shutdown() }
            let received = await wire.receive(timeout: 5)
            await stopping.value
            _ = await sending.value
            let ran = try applied()
            #expect(ran > 0)
            #expect(received.closed)
            // Every committed mutation's answer arrived; the message names the ones that did not (the first, the
            // last, how many), so a failure says whether answers were lost at the end or in the middle.
            let committed = Set(
                try engine.database.fetchRows(sql: "SELECT objectId FROM Objects").rows.compactMap {
                    $0.first?.stringValue
                })
            let answered = Set(received.responses.compactMap { Self.objectId(in: $0.body) })
            let missing = committed.subtracting(answered).compactMap { Int($0.dropFirst()) }.sorted()
            #expect(
                AttackWire.responseCount(in: received.bytes) == ran && missing.isEmpty,
                "\(ran) committed, answers missing for \(missing.count): first o\(missing.first ?? -1), last o\(missing.last ?? -1)"
            )
            #expect(received.responses.allSatisfy { $0.status == 200 })
        }
    }

    /// The `objectId` a `createObjects` answer carries.
    private static func objectId(in body: String) -> String? {
        guard let start = body.range(of: #""objectId":""#) else { return nil }
        return String(body[start.upperBound...].prefix { $0 != "\"" })
    }

    @Test("shutdown closes open WebSockets with 1001 and run() returns")
    func shutdownClosesSockets() async throws {
        try await withDevServer { server, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                let ack = try await socket.receive()
                try await socket.send([
                    "type": "subscribe", "id": "s", "payload": ["query": .string(ObjectsAPI.onCreate)],
                ])
                try #require(await server.waitForSubscriptions(1))
                _ = try await post(endpoints.http, ObjectsAPI.createRequest("live", "before shutdown"))
                let event = try await socket.receive()  // the subscription is live
                let stopping = Task { await server.shutdown() }
                let rest = try await socket.drain()
                await stopping.value
                return [ack, event, .array(rest)].map { $0 ?? .null }
            }
            let seen = try #require(outcome.result)
            #expect(seen[0] == ["type": "connection_ack"])
            #expect(
                seen[1] == ["type": "next", "id": "s", "payload": ObjectsAPI.createdEvent("live", "before shutdown")])
            #expect(seen[2] == [])
            #expect(outcome.closeCode == 1001)
        }
    }

    @Test("a request in flight is answered during shutdown")
    func inFlightRequestFinishes() async throws {
        let fixture = try EngineFixture()
        let engine = GatedEngine(fixture.engine)
        try await withDevServer(engine: engine) { server, endpoints in
            async let response = post(endpoints.http, ObjectsAPI.createRequest("f", "in flight"))
            var entered = engine.entered.stream.makeAsyncIterator()
            _ = await entered.next()  // the request is inside the server
            let stopping = Task { await server.shutdown() }
            while !server.lifecycle.isShutdownRequested { await Task.yield() }
            engine.open()
            let outcome = try await response
            await stopping.value
            #expect(outcome.status == 200)
            #expect(outcome.json == ObjectsAPI.created("f", "in flight"))
        }
        // The mutation was committed, not only answered.
        let stored = await fixture.run(ObjectsAPI.get, ["id": "f"])
        #expect(stored == ["data": ["getObjects": ObjectsAPI.object("f", "in flight")]])
    }

    @Test("dropWebSocketsAfter closes a socket after that many messages")
    func dropWebSockets() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.faults.dropWebSocketsAfter = 2
        try await withDevServer(configuration) { _, endpoints in
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                try await socket.send(["type": "ping"])
                try await socket.send(["type": "ping"])
                return try await socket.drain()
            }
            #expect(outcome.result == [["type": "connection_ack"], ["type": "pong"]])
            #expect(outcome.closeCode == 1011)
        }
    }

    @Test("the fault generator is SplitMix64: the reference sequence for seed 0")
    func splitMix64() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
        #expect(random.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    @Test("shutdown before run makes run return at once; endpoints then throws")
    func shutdownBeforeRun() async throws {
        let server = try GQLDevServer(configuration: .init())
        await server.shutdown()
        try await server.run()
        await #expect(throws: (any Error).self) { try await server.endpoints() }
    }

    @Test("a task waiting for endpoints() that is cancelled throws CancellationError at once; the server still runs")
    func cancelledEndpointsWait() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.eventLoopThreads = 1
        let server = try GQLDevServer(configuration: configuration)
        let waiting = Task { try await server.endpoints() }
        #expect(await waitUntil { server.lifecycle.suspendedWaits.port == 1 })
        waiting.cancel()
        // The server never ran, so only the cancellation can end this wait.
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(server.lifecycle.suspendedWaits.port == 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            let endpoints = try await server.endpoints()
            #expect(endpoints.http.hasPrefix("http://127.0.0.1:") && !endpoints.http.hasPrefix("http://127.0.0.1:0/"))
            await server.shutdown()
            try await group.waitForAll()
        }
    }

    @Test("a task waiting in shutdown() that is cancelled returns at once; the shutdown goes on and run() ends")
    func cancelledShutdownWait() async throws {
        let fixture = try EngineFixture()
        let engine = GatedEngine(fixture.engine)
        try await withDevServer(engine: engine) { server, endpoints in
            async let response = post(endpoints.http, ObjectsAPI.createRequest("c", "held"))
            var entered = engine.entered.stream.makeAsyncIterator()
            _ = await entered.next()  // a request is held inside the server: run() cannot end before it is answered
            let stopping = Task { await server.shutdown() }
            #expect(await waitUntil { server.lifecycle.suspendedWaits.stop == 1 })
            stopping.cancel()
            await stopping.value
            #expect(!server.lifecycle.hasStopped)  // it returned for the cancellation, not because run() ended
            #expect(server.lifecycle.suspendedWaits.stop == 0)
            engine.open()
            let outcome = try await response
            #expect(outcome.status == 200)
            #expect(outcome.json == ObjectsAPI.created("c", "held"))
        }  // withDevServer's own shutdown() waits for run() to end
    }

    @Test("a port in use makes run throw and endpoints throw")
    func portInUse() async throws {
        try await withDevServer { _, endpoints in
            let port = try #require(URLComponentsPort(endpoints.http))
            var configuration = GQLDevServer.Configuration()
            configuration.port = port
            let second = try GQLDevServer(configuration: configuration)
            await #expect(throws: (any Error).self) { try await second.run() }
            await #expect(throws: (any Error).self) { try await second.endpoints() }
        }
    }
}

private func URLComponentsPort(_ url: String) -> Int? {
    url.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }
}
