import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLNet

/// Seeded random answers into the client: WebSocket frames (valid results, random JSON, broken JSON and UTF-8, every
/// framing fault, close codes, raw garbage) after a subscription starts, and HTTP answers (statuses, JSON and broken
/// JSON, truncated and falsely compressed bodies) to queries, from Tests/Interop/hostile_ws_peer.py. Whatever comes,
/// the client neither crashes nor hangs (each batch has a deadline), and after each batch it still gets the right
/// answer from a well-behaved server (GQLDevServer) over HTTP and over a WebSocket.
///
/// `make fuzz` runs it for `GQL_FUZZ_SECONDS` (default 60) from `GQL_FUZZ_SEED` (default: the time; printed, so a
/// failing run can be replayed); a plain test run does one batch from each of the fixed seeds below (about a second).
@Suite("GQLServer client fuzz", .timeLimit(.minutes(10)))
struct ClientFuzzTests {
    /// Seeds of past failures, replayed on every run (none has failed yet).
    static let regressionSeeds: [UInt64] = [1, 2]
    /// How long one batch may take before it counts as a hang (generous: a loaded machine, a debug build).
    static let batchDeadline: Duration = .seconds(20)

    @Test func randomAnswersNeitherCrashNorHangTheClient() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["GQL_FUZZ_SECONDS"].flatMap(Double.init)
        let seed = environment["GQL_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64(Date().timeIntervalSince1970)
        let deadline = ContinuousClock.now + .seconds(seconds ?? 0)
        if seconds != nil { print("ClientFuzzTests: seed \(seed) (GQL_FUZZ_SEED=\(seed) replays it)") }
        let tally = GQLLocked(Tally())
        try await PythonPeer.with("hostile_ws_peer.py") { peer in
            try await withDevServer { good in
                var batches = (seconds == nil ? Self.regressionSeeds : [seed]).makeIterator()
                var next = seed
                while true {
                    let batch: UInt64
                    if let fixed = batches.next() {
                        batch = fixed
                    } else if ContinuousClock.now < deadline {
                        next &+= 1
                        batch = next
                    } else {
                        break
                    }
                    let ended = try await Self.within(Self.batchDeadline) {
                        await Self.socketBatch(peer.ready, seed: batch, tally: tally)
                        await Self.httpBatch(peer.ready, seed: batch, tally: tally)
                    }
                    #expect(ended, "seed \(batch): the client did not finish the batch within \(Self.batchDeadline)")
                    try await Self.expectAnswers(good, after: batch)
                }
            }
        }
        // The inputs reached the client: results and failures of both kinds (a generator that only ever produced
        // a refused handshake would exercise nothing).
        let counted = tally.withLock { $0 }
        print("ClientFuzzTests: \(counted)")
        #expect(counted.results > 0 && counted.socketErrors > 0, "\(counted)")
        #expect(counted.answers > 0 && counted.httpErrors > 0, "\(counted)")
    }

    /// What the batches got: subscription results, how many subscriptions failed, query answers and failures.
    struct Tally: Sendable {
        var results = 0
        var socketErrors = 0
        var answers = 0
        var httpErrors = 0
    }

    /// Runs `body`; whether it ended within `limit`.
    static func within(_ limit: Duration, _ body: @escaping @Sendable () async -> Void) async throws -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    static func configuration() -> GQLServer.Configuration {
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(3)
        configuration.connectTimeout = .seconds(3)
        configuration.pingInterval = .milliseconds(500)
        configuration.keepAliveTimeout = .seconds(1)
        configuration.reconnect = .never
        return configuration
    }

    /// Four subscriptions, each fed 200 random frames and then a closed connection: each yields results and ends, or
    /// fails (most at their first framing fault).
    static func socketBatch(_ base: String, seed: UInt64, tally: GQLLocked<Tally>) async {
        for part in 0..<UInt64(4) {
            await subscription(base, seed: seed &* 4 &+ part, tally: tally)
        }
    }

    static func subscription(_ base: String, seed: UInt64, tally: GQLLocked<Tally>) async {
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "frames/\(seed)/200"
        let server = GQLServer(WebSocket: url, configuration: configuration())
        do {
            for try await result in server.subscription("subscription { n }") {
                _ = result.data
                tally.withLock { $0.results += 1 }
            }
        } catch {
            // Any error is an answer; only a crash or a hang is not.
            tally.withLock { $0.socketErrors += 1 }
        }
        try? await server.shutdown()
    }

    /// Five queries, each answered at random.
    static func httpBatch(_ base: String, seed: UInt64, tally: GQLLocked<Tally>) async {
        let server = GQLServer(HTTP: base + "answers/\(seed)", configuration: configuration())
        for _ in 0..<5 {
            do {
                _ = try await server.query("{ n }")
                tally.withLock { $0.answers += 1 }
            } catch {
                tally.withLock { $0.httpErrors += 1 }
            }
        }
        try? await server.shutdown()
    }

    /// A well-behaved server still gets the right answers, over HTTP and over a WebSocket.
    static func expectAnswers(_ url: String, after seed: UInt64) async throws {
        let http = GQLServer(HTTP: url)
        let socket = GQLServer(WebSocket: GQLServer.webSocketURL(forHTTP: url))
        try await withClient(http) { http in
            try await withClient(socket) { socket in
                let overHTTP = try await http.query("{ __typename }")
                let overSocket = try await socket.query("{ __typename }")
                #expect(overHTTP.data?["__typename"] == "Query", "seed \(seed): \(overHTTP)")
                #expect(overSocket.data?["__typename"] == "Query", "seed \(seed): \(overSocket)")
            }
        }
    }
}
