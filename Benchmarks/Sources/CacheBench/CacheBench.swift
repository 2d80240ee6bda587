import BenchKit
import Foundation
import GQLCache
import GQLCore

/// `swift run -c release CacheBench [--posts N] [--rounds N] [--watchers N] [--only write,read,watch]`
///
/// GQLCache on a realistic answer (a feed of N posts, each with its author and three comments with theirs:
/// about 6,000 records and 2 MiB of JSON for 1,000 posts; seeded), contenders taking turns in every round, every
/// answer checked against the parse's, member for member in order (serialized):
/// - write: parsing the answer and storing it (normalize + one transaction) vs parsing it and inserting its
///   records as rows by hand in one transaction through SQLite's C API (goal ≤ 1.5×);
/// - read: the whole query read back from a warm cache (its memory layer) and from a cold one (a fresh GQLCache
///   on the file: SQLite only) vs parsing the network answer's bytes (goals ≤ 0.5× and ≤ 1.5×); beside them, a
///   relaunched app's cold read: opening the cache and reading in a fresh process vs the parse in a fresh process
///   (``FreshProcessRead``);
/// - watch: N watchers on distinct queries (one post each), one user record changed: only the watchers of that
///   user's posts emit, and the cache work per unaffected watcher (goal ≤ 10 µs).
@main
struct CacheBench {
    struct Options {
        static let workloads: Set<String> = ["write", "read", "watch"]
        /// Run only when asked for (`--only memory`, ``WarmMemory``).
        static let diagnostics: Set<String> = ["memory"]

        var posts = 1_000
        var rounds = 5
        var watchers = 1_000
        var only = Options.workloads
        var help = false

        static let usage = """
            usage: CacheBench [--posts N] [--rounds N] [--watchers N] [--only write,read,watch]
              --posts N      posts in the feed (default 1000: about 6,000 records, 2 MiB of JSON)
              --rounds N     measured rounds, after one warm-up round; medians are reported (default 5)
              --watchers N   watchers of the watch workload, one post each (default 1000, at most --posts)
              --only LIST    the workloads to run (default all three); `memory` times the warm read and the
                             parse with their data in the processor's caches and evicted (WarmMemory)
            """

        init(_ arguments: ArraySlice<String>) throws {
            var arguments = Arguments(arguments)
            while let argument = arguments.next() {
                switch argument {
                case "--posts": posts = try arguments.number(for: argument)
                case "--rounds": rounds = try arguments.number(for: argument)
                case "--watchers": watchers = try arguments.number(for: argument)
                case "--only": only = try arguments.list(for: argument, allowed: Self.workloads.union(Self.diagnostics))
                case "--help", "-h": help = true
                default: throw BenchError("unknown argument \(argument)")
                }
            }
            watchers = min(watchers, posts)
        }
    }

    static func main() async {
        if CommandLine.arguments.dropFirst().first == "--fresh-child" {
            do {
                try FreshProcessRead.child(Array(CommandLine.arguments.dropFirst(2)))
            } catch {
                FileHandle.standardError.write(Data("CacheBench --fresh-child: \(error)\n".utf8))
                exit(1)
            }
            return
        }
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("CacheBench: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            print(Options.usage)
            return
        }
        do {
            try await bench(options)
        } catch {
            FileHandle.standardError.write(Data("CacheBench: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Runs the workloads and prints the table; throws when an answer was wrong (exit status 1).
    static func bench(_ options: Options) async throws {
        print("CacheBench — GQLCache (normalized records in SQLite, memory layer, watchers) vs the work by hand")
        for line in BenchEnvironment.header() { print(line) }
        let feed = try Feed(posts: options.posts)
        print(
            "answer:  \(feed.posts) posts × (author + \(Feed.commentsPerPost) comments with authors), "
                + "\(feed.recordCount) records, "
                + String(format: "%.2f MiB", Double(feed.bytes.count) / 1_048_576) + " of JSON, seed 0xCAC4E5; "
                + "\(options.rounds) rounds after a warm-up, contenders in turn, medians of per-round ratios")
        print("")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cachebench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // CACHEBENCH_KEEP=1 keeps the round's files (say, to look at a cache file's pages with sqlite3's dbstat).
        let keep = ProcessInfo.processInfo.environment["CACHEBENCH_KEEP"] != nil
        if keep { progress("files kept in \(directory.path)") }
        defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
        let workloads = CacheWorkloads(feed: feed, directory: directory, options: options)
        var table = ResultTable()
        if options.only.contains("write") || options.only.contains("read") { try workloads.writeAndRead(into: &table) }
        if options.only.contains("watch") { try await workloads.watch(into: &table) }
        if options.only.contains("memory") {
            try WarmMemory(feed: feed, file: workloads.file("memory"), rounds: options.rounds).run()
        }
        table.print()
        print("load average after: \(BenchEnvironment.loadAverage())")
    }
}

/// Progress on standard error, so the table on standard output stays clean.
func progress(_ text: String) {
    FileHandle.standardError.write(Data("\(text)\n".utf8))
}

/// Seconds `body` took.
func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return (ContinuousClock.now - start).seconds
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// One row per figure: GQLCache's time beside the peer's, the median per-round ratio, and the goal (a ratio at
/// most, or an absolute figure at most).
struct ResultTable {
    struct Row {
        var label: String
        var cache: String
        var peer: String
        var ratio: String
        var goal: String
        var met: Bool?
    }

    var rows: [Row] = []
    var notes: [String] = []

    /// A time row: medians in milliseconds, the per-round ratios, met when the median ratio is ≤ `goal`.
    mutating func add(_ label: String, cache: [Double], peer: [Double], peerName: String, goal: Double) {
        guard let cacheTime = Statistics.median(cache), let peerTime = Statistics.median(peer) else { return }
        let ratios = Statistics.ratios(cache, peer)
        let ratio = Statistics.median(ratios) ?? .infinity
        rows.append(
            Row(
                label: label, cache: String(format: "%.1f ms", cacheTime * 1000),
                peer: String(format: "%.1f ms", peerTime * 1000) + " " + peerName, ratio: Statistics.spread(ratios),
                goal: String(format: "≤ %.2f×", goal), met: ratio <= goal))
    }

    func print() {
        var lines = [["workload", "GQLCache", "peer", "ratio (lowest–highest round)", "goal"]]
        for row in rows {
            lines.append([
                row.label, row.cache, row.peer, row.ratio, row.goal + (row.met.map { $0 ? " ✔" : " ✘" } ?? ""),
            ])
        }
        let widths = lines[0].indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        for cells in lines {
            Swift.print(
                cells.enumerated().map { column, cell in
                    column == 0 || column == 2 || column == 4
                        ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[column] - cell.count) + cell
                }.joined(separator: "  "))
        }
        for note in notes { Swift.print(note) }
        Swift.print("")
    }
}
