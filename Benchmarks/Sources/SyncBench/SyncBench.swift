import BenchKit
import Foundation
import GQLDevServer
import GQLStore
import GQLSync
import Logging

/// `swift run -c release SyncBench [--writes N] [--mutations N] [--rows N] [--rounds N] [--chunks N]
/// [--only enqueue,drain,pull] [--contenders single,batched,loop,recorded,keyed]`
///
/// GQLSync against what an app would write by hand, on an in-process GQLDevServer (in-memory database, loopback,
/// random port), contenders taking turns in every round, every answer checked:
/// - enqueue: N writes each with `sync.steady(…, in: tx)` vs the same writes alone (goal: ≤ 1.5× the time);
/// - drain: N queued mutations delivered by the engine, one per request and in batches of 50, vs a plain loop of
///   `server.mutation` calls (goals ≥ 0.9× and ≥ 3× its rate);
/// - pull: N server rows paged into the store by `pull` vs the same pages fetched with `server.query` on the same
///   client and inserted by hand, by the dictionary API, by Codable objects and by a prepared upsert, the fastest
///   of the three (goal ≥ 0.9×); and the floor, the pages' rows inserted by raw SQLite statements.
@main
struct SyncBench {
    struct Options {
        static let workloads: Set<String> = ["enqueue", "drain", "pull"]
        static let drainContenders: Set<String> = ["single", "batched", "loop", "recorded", "keyed"]

        var writes = 2_000
        var mutations = 10_000
        var rows = 100_000
        var rounds = 5
        /// The slices the one-per-request drain and its loop take turns in, per round.
        var chunks = 10
        /// The workloads to run (e.g. one of them under `perf record`).
        var only = Options.workloads
        /// The drain's contenders to run (a profile of one of them); a row is printed only when both its sides ran.
        var contenders: Set<String> = ["single", "batched", "loop", "recorded"]
        var help = false

        static let usage = """
            usage: SyncBench [--writes N] [--mutations N] [--rows N] [--rounds N] [--chunks N] [--only enqueue,drain,pull]
                             [--contenders single,batched,loop,recorded,keyed]
              --writes N       write transactions per enqueue contender and round (default 2000)
              --mutations N    queued mutations per drain contender and round (default 10000)
              --rows N         server rows of the pull (default 100000)
              --rounds N       measured rounds, after one warm-up round; medians are reported (default 5)
              --chunks N       slices of the mutations in which the one-per-request drain and the loop take
                               turns, A B B A, within a round (default 10)
              --only LIST      the workloads to run (default all three)
              --contenders L   the drain's contenders: the engine one per request (single) and 50 per request
                               (batched), the mutation loop (loop), the loop with a record per call (recorded);
                               default all four; keyed, the loop sending an Idempotency-Key header as the engine
                               does, only when named
            environment: SYNCBENCH_THREADS=1 prints what each drain contender cost per item on each kind of
              thread (CPU, time runnable but waiting for a core, context switches); SYNCBENCH_PERF_FIFO=PATH
              turns `perf record -D -1 --control fifo:PATH` on for the timed drains only
            """

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--writes": writes = try arguments.number(for: argument)
                case "--mutations": mutations = try arguments.number(for: argument)
                case "--rows": rows = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--chunks": chunks = try arguments.number(for: argument)
                case "--only": only = try arguments.list(for: argument, allowed: Self.workloads)
                case "--contenders": contenders = try arguments.list(for: argument, allowed: Self.drainContenders)
                case "--help", "-h": help = true
                default: throw BenchError("unknown argument \(argument)")
                }
            }
        }

        func runs(_ part: String) -> Bool { only.contains(part) }
    }

    static func main() async {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("SyncBench: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            print(Options.usage)
            return
        }
        do {
            if try await bench(options) { exit(1) }
        } catch {
            FileHandle.standardError.write(Data("SyncBench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func bench(_ options: Options) async throws -> Bool {
        print("SyncBench — GQLSync (outbox, delivery, pull) vs the same work by hand, loopback")
        for line in BenchEnvironment.header() { print(line) }
        print(
            "server:  GQLDevServer in this process, in-memory database, 127.0.0.1, random port; "
                + "\(options.rounds) rounds after a warm-up, medians of per-round ratios")
        print("")
        let database = try GQLDatabase(path: ":memory:")
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        let logger = Logger(label: "SyncBench.server", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, database: database, logger: logger)
        let serving = Task { try await server.run() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var table = ResultTable()
        do {
            let endpoints = try await server.endpoints()
            let workloads = SyncWorkloads(
                http: endpoints.http, serverDatabase: database, directory: directory, options: options)
            if options.runs("enqueue") { try await workloads.enqueue(into: &table) }
            if options.runs("drain") { try await workloads.drain(into: &table) }
            if options.runs("pull") { try await workloads.pull(into: &table) }
        } catch {
            await server.shutdown()
            _ = await serving.result
            throw error
        }
        await server.shutdown()
        _ = await serving.result
        table.print()
        print("load average after: \(BenchEnvironment.loadAverage())")
        return table.failed
    }
}

/// Progress on standard error, so the table on standard output stays clean.
func progress(_ text: String) {
    FileHandle.standardError.write(Data("\(text)\n".utf8))
}

/// Writes every dirty page back to disk (`sync(2)`), so the write-back of untimed set-up work does not land in a
/// timed section.
func flushToDisk() { sync() }

/// Seconds `body` took.
func timed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// One row per figure: GQLSync's rate beside the peer's, the median per-round ratio, and the goal.
struct ResultTable {
    struct Row {
        var label: String
        var sync: Double
        var peer: Double
        var unit: String
        /// The per-round ratios (GQLSync ÷ peer).
        var ratios: [Double]
        /// `nil`: a row with no goal of the (a floor, a diagnostic contender, one side of the best).
        var goal: Double?

        var ratio: Double { Statistics.median(ratios) ?? 0 }
    }

    var rows: [Row] = []
    /// Lines printed under the table (a floor's own ratio).
    var notes: [String] = []
    var failed = false

    /// Adds a row when both sides were measured (a `--contenders` run may leave one out).
    mutating func add(_ label: String, sync: [Double], peer: [Double], unit: String, goal: Double?) {
        guard let syncRate = Statistics.median(sync), let peerRate = Statistics.median(peer) else { return }
        rows.append(
            Row(
                label: label, sync: syncRate, peer: peerRate, unit: unit, ratios: Statistics.ratios(sync, peer),
                goal: goal))
    }

    func print() {
        var lines = [["workload", "GQLSync", "by hand", "unit", "ratio (lowest–highest round)", "goal"]]
        for row in rows {
            lines.append([
                row.label, String(format: "%.0f", row.sync), String(format: "%.0f", row.peer), row.unit,
                Statistics.spread(row.ratios),
                row.goal.map { String(format: "≥ %.2f× ", $0) + (row.ratio >= $0 ? "✔" : "✘") } ?? "none",
            ])
        }
        let widths = lines[0].indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        for cells in lines {
            Swift.print(
                cells.enumerated().map { column, cell in
                    column == 0 || column == 3 || column == 5
                        ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[column] - cell.count) + cell
                }.joined(separator: "  "))
        }
        for note in notes { Swift.print(note) }
        Swift.print("")
        Swift.print("ratio: median over rounds of GQLSync's rate ÷ the hand-written peer's, measured back to back;")
        Swift.print(
            "  enqueue compares rates too: ≥ 0.67× means a write with steady(in: tx) takes ≤ 1.5× the plain write")
    }
}
