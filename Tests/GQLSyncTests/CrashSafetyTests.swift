import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kills a process that queues and delivers mutations (`gql-cli sync enqueue-loop`) at random moments, then
/// checks the server's log of applied mutations: every acknowledged item once, in call order; the outbox file
/// intact; and at most one item sent again per crash, which the server (honouring the `Idempotency-Key`)
/// answered without applying it twice.
///
/// A killed process's last request may still be inside the server when the next run sends it again — the server
/// read it but had not committed it yet — and without the key it would commit after the items the next run sent
/// meanwhile (seen on a loaded machine: item 5 applied again after 6 and 7).
///
/// The kill moments are drawn from a printed seed (`GQL_TEST_SEED` replays a run's draws; the child's own timing still
/// varies). The last `backlog` items are always queued while the server cannot be reached, so every run has a
/// delivery with nothing left to queue to kill: those kills land once the server has applied a drawn number of
/// further items, decided by what the server applied rather than by the clock.
@Suite(.timeLimit(.minutes(5))) struct CrashSafetyTests {
    static let total = 1_200
    /// Items queued only while the server is unreachable: the drain kills' backlog.
    static let backlog = 300
    static let kills = 20
    /// Kills while a run only delivers what earlier runs queued.
    static let drainKills = 5

    /// The `gql-cli` built with these tests: `GQL_CLI_PATH`, or next to the test bundle.
    static func cli() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["GQL_CLI_PATH"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for _ in 0..<4 {
            directory.deleteLastPathComponent()
            let candidate = directory.appendingPathComponent("gql-cli")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw GQLError(.notFound, "gql-cli is not built next to the tests; build it or set GQL_CLI_PATH")
    }

    /// What one run printed.
    struct Run {
        var queued: [Int] = []
        var drained = false
        /// Whether the run was killed (a loaded machine can let a run finish before its kill lands).
        var killed = false
    }

    /// Runs the loop up to `count`; kills it with SIGKILL once it printed `killAfter` lines, or printed `queued`
    /// with the last number, or `killAt` after it started, or once `server` has applied `killAfterApplied` more
    /// items than when it started (never when all are `nil`/`false`).
    static func run(
        _ cli: URL, path: String, url: String, count: Int = total, killAfter: Int?, killAtLast: Bool = false,
        killAt: Duration? = nil, killAfterApplied: (server: SyncServer, items: Int)? = nil
    ) async throws -> Run {
        let before = try killAfterApplied.map { try $0.server.appliedNumbers().count }
        // Paced, so the kills land while items are both being queued and being sent.
        let process = try ChildProcess(
            cli.path, ["sync", "enqueue-loop", path, "--url", url, "--count", "\(count)", "--interval-ms", "2"],
            stdout: .pipe)
        var run = Run()
        var killed = false
        let timer = killAt.map { delay in
            Task {
                try await Task.sleep(for: delay)
                process.kill(SIGKILL)
            }
        }
        defer { timer?.cancel() }
        // Polls what the server applied (its own file) until the drawn number more is there.
        let watcher: Task<Void, any Error>? =
            if let watch = killAfterApplied, let before {
                Task {
                    while !Task.isCancelled {
                        if let applied = try? watch.server.appliedNumbers().count, applied >= before + watch.items {
                            process.kill(SIGKILL)
                            return
                        }
                        try await Task.sleep(for: .milliseconds(2))
                    }
                }
            } else {
                nil
            }
        defer { watcher?.cancel() }
        // Read to the end: lines printed before the kill landed are acknowledged calls too.
        for await line in process.lines() {
            if line == "drained" { run.drained = true }
            if line.hasPrefix("queued "), let n = Int(line.dropFirst(7)) { run.queued.append(n) }
            let lastQueued = killAtLast && run.queued.last == total
            if !killed, lastQueued || killAfter.map({ run.queued.count + (run.drained ? 1 : 0) >= $0 }) == true {
                process.kill(SIGKILL)
                killed = true
            }
        }
        run.killed = await process.wait() == .signalled(SIGKILL)
        return run
    }

    @Test func killedRunsLoseNothingAndRepeatAtMostTheItemInFlight() async throws {
        var random = SplitMix64(seed: TestSeed.make("GQLSync crash kills"))
        let cli = try Self.cli()
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let server = SyncServer(directory: directory.url)
        try await server.start()
        let path = directory.path("app.sqlite")

        var acknowledged: [Int] = []
        var crashes = 0
        let reachable = Self.total - Self.backlog
        for _ in 0..<Self.kills {
            // At most 50 calls a run before its kill: 20 runs do not reach the last call unless the child outruns
            // the kill (it prints faster than a loaded parent reads); a run that drained everything ends the kills.
            let run = try await Self.run(
                cli, path: path, url: server.http, count: reachable, killAfter: Int.random(in: 1...50, using: &random))
            acknowledged += run.queued
            if run.killed { crashes += 1 }
            if run.drained && !run.killed { break }
        }
        #expect(crashes > 0, "no run was killed")
        // The rest queued while the server cannot be reached (the run killed after its last call), then delivered
        // by runs that only send, each killed once the server applied a drawn number more: kills after a queued
        // line land while calls are still coming, these in a drain with nothing left to queue.
        // (A call whose line a kill cut off is queued all the same: the run is also killed after a while.)
        let queued = try await Self.run(
            cli, path: path, url: "http://127.0.0.1:1/graphql", killAfter: nil, killAtLast: true,
            killAt: .seconds(60))
        acknowledged += queued.queued
        if queued.killed { crashes += 1 }
        #expect(acknowledged.last == Self.total, "the unreachable run did not queue the rest")
        #expect(Self.total - (try server.appliedNumbers().count) >= Self.backlog)
        var drainKills = 0
        for _ in 0..<Self.drainKills {
            let items = Int.random(in: 1...25, using: &random)
            let run = try await Self.run(
                cli, path: path, url: server.http, killAfter: nil, killAfterApplied: (server, items))
            acknowledged += run.queued
            if run.killed {
                crashes += 1
                drainKills += 1
            }
            if run.drained && !run.killed { break }
        }
        // 5 kills after at most 25 items each (and what a poll every 2 ms lets slip past) leave part of the 300 for
        // the last run: every kill lands in a drain.
        #expect(drainKills == Self.drainKills, "only \(drainKills) runs were killed while they only delivered")
        let last = try await Self.run(cli, path: path, url: server.http, killAfter: nil)
        acknowledged += last.queued
        #expect(last.drained)
        await server.stop()

        // Acknowledged in order, never twice: a restarted run goes on after the last commit. A commit whose line
        // the kill cut off is not acknowledged (at most one per crash), but it is in the outbox all the same.
        #expect(acknowledged == Array(Set(acknowledged)).sorted())
        #expect(Self.total - acknowledged.count <= crashes)
        let applied = try server.appliedNumbers()
        #expect(applied == Array(1...Self.total), "lost, repeated or reordered items")
        let replays = server.idempotentReplays
        #expect(replays <= crashes, "\(replays) items sent again for \(crashes) crashes")

        let db = try GQLDatabase(path: path)
        #expect(try db.fetchRows(sql: "PRAGMA integrity_check").rows.first?.first == "ok")
        #expect(
            try db.fetchRows(sql: "SELECT COUNT(*) FROM _gqlsync_outbox WHERE state <> 'removed'").rows.first?.first
                == 0)
    }
}
