import Foundation
import GQLDevServer
import GQLStore
import GQLSync
import Logging

/// `swift run -c release SyncBench [--writes N] [--mutations N] [--rows N] [--rounds N] [--only enqueue|drain|pull]`
///
/// GQLSync against what an app would write by hand, on an in-process GQLDevServer (in-memory database, loopback,
/// random port), contenders taking turns in every round, every answer checked:
/// - enqueue: N writes each with `sync.steady(…, in: tx)` vs the same writes alone (goal: ≤ 1.5× the time);
/// - drain: N queued mutations delivered by the engine, one per request and in batches of 50, vs a plain loop of
///   `server.mutation` calls (goals ≥ 0.9× and ≥ 3× its rate);
/// - pull: N server rows paged into the store by `pull` vs the same pages fetched with `server.query` and
///   inserted by hand, by the dictionary API and by Codable objects, the faster of the two (goal ≥ 0.9×).
@main
struct SyncBench {
    struct Options {
        var writes = 2_000
        var mutations = 10_000
        var rows = 100_000
        var rounds = 3
        /// The one workload to run (`enqueue`, `drain` or `pull`, e.g. under `perf record`), or all three.
        var only: String?

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = arguments
            while let argument = arguments.popFirst() {
                if argument == "--only" {
                    guard let part = arguments.popFirst(), ["enqueue", "drain", "pull"].contains(part) else {
                        throw BenchFailure("--only needs enqueue, drain or pull")
                    }
                    only = part
                    continue
                }
                guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
                    throw BenchFailure("\(argument) needs a positive number")
                }
                switch argument {
                case "--writes": writes = value
                case "--mutations": mutations = value
                case "--rows": rows = value
                case "--rounds": rounds = value
                default: throw BenchFailure("unknown argument \(argument)")
                }
            }
        }

        func runs(_ part: String) -> Bool { only == nil || only == part }
    }

    static func main() async {
        do {
            let options = try Options(CommandLine.arguments.dropFirst())
            if try await bench(options) { exit(1) }
        } catch {
            FileHandle.standardError.write(Data("SyncBench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func bench(_ options: Options) async throws -> Bool {
        print("SyncBench — GQLSync (outbox, delivery, pull) vs the same work by hand, loopback")
        print("date:    \(Date().ISO8601Format())")
        print("machine: nproc \(ProcessInfo.processInfo.activeProcessorCount)")
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
        return table.failed
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
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

/// The median of a non-empty list.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// One row per figure: GQLSync's rate beside the peer's, the median per-round ratio, and the goal.
struct ResultTable {
    struct Row {
        var label: String
        var sync: Double
        var peer: Double
        var unit: String
        var ratio: Double
        /// `nil`: a row that shows a floor, with no goal of the issue's.
        var goal: Double?
    }

    var rows: [Row] = []
    var failed = false

    mutating func add(_ label: String, sync: [Double], peer: [Double], unit: String, goal: Double?) {
        let ratios = zip(sync, peer).map { $0 / $1 }
        rows.append(Row(label: label, sync: median(sync), peer: median(peer), unit: unit, ratio: median(ratios), goal: goal))
    }

    func print() {
        var lines = [["workload", "GQLSync", "by hand", "unit", "ratio", "goal"]]
        for row in rows {
            lines.append([
                row.label, String(format: "%.0f", row.sync), String(format: "%.0f", row.peer), row.unit,
                String(format: "%.2f×", row.ratio),
                row.goal.map { String(format: "≥ %.2f× ", $0) + (row.ratio >= $0 ? "✔" : "✘") } ?? "(floor)",
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
        Swift.print("")
        Swift.print("ratio: median over rounds of GQLSync's rate ÷ the hand-written peer's, measured back to back;")
        Swift.print("  enqueue compares rates too: ≥ 0.67× means a write with steady(in: tx) takes ≤ 1.5× the plain write")
    }
}
