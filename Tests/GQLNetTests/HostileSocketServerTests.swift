import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLNet

/// GQLServer's WebSocket client against a hostile graphql-transport-ws server (Tests/Interop/hostile_ws_peer.py, raw
/// asyncio sockets): floods of pings it never reads the answers to, floods of results at a slow caller, endless
/// messages, refused upgrades whose body never ends.
///
/// Memory is checked with the client's own counters rather than the process's RSS: what grew without bound before
/// were exactly these queues (pongs in NIO's write buffer, messages in the writer's queue, results waiting for the
/// caller), each counter is exact where an RSS figure of the whole test process (other suites, the allocator's
/// caching) is not, and a bound on them holds however long the flood lasts. Tests/GQLCLITests/SignalTests
/// measures a child `gql-cli subscribe`'s RSS as well.
@Suite("GQLServer against hostile WebSocket servers", .timeLimit(.minutes(2)))
struct HostileSocketServerTests {
    static let onCreate = "subscription { onCreateObjects { objectId } }"

    static func withPeer<T>(_ body: (String) async throws -> T) async throws -> T {
        try await PythonPeer.with("hostile_ws_peer.py") { peer in
            try await body(peer.ready.replacingOccurrences(of: "http://", with: "ws://"))
        }
    }

    /// A client for `path` with a short keep-alive (a 500 ms ping interval, 1.5 s for the pong) and no reconnect.
    static func server(_ base: String, _ path: String, configure: (inout GQLServer.Configuration) -> Void = { _ in })
        -> GQLServer
    {
        var configuration = GQLServer.Configuration()
        configuration.pingInterval = .milliseconds(500)
        configuration.keepAliveTimeout = .milliseconds(1_500)
        configuration.connectTimeout = .seconds(10)
        configuration.reconnect = .never
        configure(&configuration)
        return GQLServer(WebSocket: base + path.dropFirst(), configuration: configuration)
    }

    /// The largest queues seen while `body` ran, sampled every 10 ms.
    struct Peaks: Sendable {
        var nioBytes = 0
        var outbox = 0
        var statistics = WebSocketFrameHandler.Statistics()
    }

    static func sampling<T: Sendable>(
        _ server: GQLServer, _ body: @Sendable @escaping () async throws -> T
    ) async throws -> (T, Peaks) {
        let connection = try #require(server.socket)
        let peaks = GQLLocked(Peaks())
        let sampler = Task {
            while !Task.isCancelled {
                let (socket, outbox) = connection.shared.withLock { ($0.socket, $0.outgoing?.count ?? 0) }
                if let socket {
                    let bytes = await socket.bufferedBytes
                    let statistics = await socket.statistics
                    peaks.withLock {
                        $0.nioBytes = max($0.nioBytes, bytes)
                        if statistics.pingsReceived >= $0.statistics.pingsReceived { $0.statistics = statistics }
                    }
                }
                peaks.withLock { $0.outbox = max($0.outbox, outbox) }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        defer { sampler.cancel() }
        let result = try await body()
        sampler.cancel()
        _ = await sampler.value
        return (result, peaks.withLock { $0 })
    }

    /// The error the subscription's iteration ends with (`nil` when it ended normally).
    static func ending(of server: GQLServer) async -> (any Error)? {
        do {
            for try await _ in server.subscription(onCreate) {}
            return nil
        } catch {
            return error
        }
    }

    @Test func aPingFloodGetsOnePongAtATimeAndTheKeepAliveStillEndsIt() async throws {
        try await Self.withPeer { base in
            let server = Self.server(base, "/ping-flood")
            try await withClient(server) { server in
                let (error, peaks) = try await Self.sampling(server) { await Self.ending(of: server) }
                // The flood does not count as the server being alive: our ping goes unanswered and the keep-alive
                // ends the connection (0.5 s + 1.5 s, and the 2 s close handshake at most). The `.timeout` shows
                // the keep-alive ended it, however slow the machine; a flood taken for life would never end, and the
                // suite's time limit would fail the test.
                #expect((error as? GQLError)?.code == .timeout, "\(String(describing: error))")
                // One pong at a time: reading stops while one waits, so NIO's write buffer holds one pong (or the
                // close) instead of a pong per ping. (How soon the operating system's buffers fill varies; the
                // mechanism itself is WebSocketFrameHandlerTests'.)
                #expect(peaks.statistics.pingsReceived > 0, "\(peaks)")
                #expect(peaks.nioBytes < 1_024, "\(peaks)")
                #expect(peaks.outbox <= 2, "\(peaks)")
            }
        }
    }

    @Test func aProtocolPingFloodKeepsOnePongQueuedAndTheKeepAliveStillEndsIt() async throws {
        try await Self.withPeer { base in
            let server = Self.server(base, "/protocol-ping-flood")
            try await withClient(server) { server in
                let (error, peaks) = try await Self.sampling(server) { await Self.ending(of: server) }
                // Ended by the keep-alive (see the test above), however slow the machine.
                #expect((error as? GQLError)?.code == .timeout, "\(String(describing: error))")
                // Pongs replace each other in the writer's queue; the writer waits while the socket is unwritable.
                #expect(peaks.outbox <= 2, "\(peaks)")
                #expect(peaks.nioBytes < 70_000 + 1_024, "\(peaks)")
            }
        }
    }

    /// 50,000 results at a caller that is slow at first: the results waiting never exceed the watermark plus what
    /// one read from the socket brings (≤ 4 × 64 KiB of ~60-byte messages), and none is lost or reordered.
    @Test func aSlowCallerStopsTheSocketAndLosesNothing() async throws {
        try await Self.withPeer { base in
            let total = 50_000
            let server = Self.server(base, "/next-flood/\(total)") { $0.keepAliveTimeout = .seconds(30) }
            try await withClient(server) { server in
                let connection = try #require(server.socket)
                let peak = GQLLocked(0)
                var expected = 0
                for try await result in server.subscription(Self.onCreate) {
                    #expect(result.data?["n"]?.intValue == Int64(expected))
                    expected += 1
                    if expected < 300 {
                        try await Task.sleep(for: .milliseconds(2))
                        let buffered = connection.bufferedResults
                        peak.withLock { $0 = max($0, buffered.peak) }
                    }
                }
                #expect(expected == total)
                let wire = #"{"type":"next","id":"1","payload":{"data":{"n":12345}}}"#.utf8.count + 2
                let bound = SocketResults.highWatermark + 4 * 65_536 / wire
                #expect(peak.withLock { $0 } >= SocketResults.highWatermark, "the caller lagged")
                #expect(peak.withLock { $0 } <= bound, "at most \(bound)")
            }
        }
    }

    @Test(arguments: ["/binary-endless", "/text-endless"])
    func anEndlessMessageFailsAtOnce(_ path: String) async throws {
        try await Self.withPeer { base in
            // Keep-alive at its 30 s default: the message must end it, not the keep-alive.
            let server = Self.server(base, path) {
                $0.pingInterval = .seconds(15)
                $0.keepAliveTimeout = .seconds(30)
                $0.maximumResponseSize = 1 << 20
            }
            try await withClient(server) { server in
                // `.responseTooLarge`, not the keep-alive's `.timeout`: the message's size ended it.
                let error = await Self.ending(of: server)
                #expect((error as? GQLError)?.code == .responseTooLarge, "\(String(describing: error))")
            }
        }
    }

    @Test(arguments: ["/refuse-endless", "/refuse-silent"])
    func aRefusedUpgradeWhoseBodyNeverEndsFailsWithItsStatus(_ path: String) async throws {
        try await Self.withPeer { base in
            let server = Self.server(base, path) { $0.connectTimeout = .seconds(2) }
            try await withClient(server) { server in
                let started = ContinuousClock.now
                let error = await #expect(throws: GQLError.self) { try await server.connect() }
                #expect(error?.httpStatus == 503, "\(String(describing: error))")
                // The endless body stops at the excerpt; the silent one at the configured 2 s deadline. Bounded below
                // the 10 s default connect timeout (which cannot fire sooner), not by the machine's speed: only a
                // refusal the default ended fails it.
                #expect(ContinuousClock.now - started < GQLServer.Configuration().connectTimeout, "\(path)")
                if path == "/refuse-endless" { #expect(error?.message.contains("zzz") == true) }
            }
        }
    }
}
