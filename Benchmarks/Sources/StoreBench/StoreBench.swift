import BenchGQLStore
import BenchGRDB
import BenchKit
import BenchRawSQLite
import BenchSQLite
import Foundation

/// `swift run -c release StoreBench [--rows N] [--rounds N] [--only gqlstore,grdb,raw] [--grdb pool|queue]
/// [--no-observers] [--verbose]`
///
/// Runs the workloads of README.md for each implementation in interleaved rounds (every implementation once per
/// round, the order rotating from round to round, so that drift on the machine hits every implementation alike)
/// after one warm-up round, and prints each implementation's median with the median and spread of the per-round
/// ratios, and the targets.
@main
struct StoreBench {
    static func main() {
        let options: Options
        do {
            options = try Options(CommandLine.arguments.dropFirst())
        } catch {
            FileHandle.standardError.write(Data("StoreBench: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            print(Options.usage)
            return
        }
        var implementations: [any StoreImplementation] = []
        // EncryptionBench compares equal page caches: the plain side gets the encrypted connections' default 8 MB.
        let plainCacheKiB = options.only.contains("encrypted") ? 8_000 : nil
        if options.only.contains("gqlstore") { implementations.append(GQLStoreBench(pageCacheKiB: plainCacheKiB)) }
        if options.only.contains("grdb") { implementations.append(GRDBStore(mode: options.grdbMode)) }
        if options.only.contains("raw") { implementations.append(RawSQLiteStore()) }
        if options.only.contains("encrypted") {
            // EncryptionBench (make bench-encryption): the same workloads on an encrypted file, interleaved.
            implementations.append(GQLStoreBench.encrypted())
        }

        let data = BenchData(rowCount: options.rows)
        printHeader(options, data)
        let results = Runner(options: options, data: data, implementations: implementations).run()
        printTable(results)
        for implementation in implementations { print("  " + implementation.details) }
        if options.only.contains("encrypted") {
            let caches = implementations.compactMap { $0 as? GQLStoreBench }.map { ($0.name, $0.cacheSize) }
            let shown = caches.map { "\($0.0) \($0.1.map(String.init) ?? "?")" }
            print("PRAGMA cache_size: " + shown.joined(separator: ", "))
            if Set(caches.map(\.1)).count > 1 {
                print("EncryptionBench: the plain and encrypted page caches differ; the ratios compare unequal caches")
                exit(1)
            }
            printOpenCost()
        }
        print("load average after: \(BenchEnvironment.loadAverage())")
        if !results.errors.isEmpty { exit(1) }
    }

    /// EncryptionBench's key-derivation line: opening an existing file and reading one row, plain, raw key and
    /// passphrase (PBKDF2 runs once per open), as the SQLCipher peer measures its own.
    static func printOpenCost() {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("storebench-open-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let costs = try GQLStoreBench.openCost(directory: directory.path)
            let text = costs.map { "\($0.label) " + String(format: "%.1f ms", $0.milliseconds) }
            print("open + first read (median of 5): " + text.joined(separator: ", "))
        } catch {
            print("open + first read: failed: \(error)")
        }
    }

    static func printHeader(_ options: Options, _ data: BenchData) {
        print("StoreBench — GQLStore vs GRDB vs raw SQLite C loop")
        for line in BenchEnvironment.header() { print(line) }
        print("sqlite:  \(String(cString: sqlite3_libversion())) (system libsqlite3, shared by all three)")
        print(
            "data:    \(data.rows.count) rows × 6 columns, \(BenchData.lookupCount) lookups, "
                + "\(BenchData.observerCount) observers (age > \(data.observerThresholds.map(String.init).joined(separator: ","))) "
                + "→ \(data.expectedNotifications) notifications")
        print(
            "rounds:  \(options.rounds) after \(options.warmup) warm-up, interleaved (order rotating each round); "
                + "medians, ratios: median (min–max) of the per-round ratios; "
                + "WAL + synchronous=NORMAL, fresh temp file each round")
        print("")
    }

    static func printTable(_ results: Runner.Results) {
        func samples(_ name: String, _ workload: Workload) -> [Double] { results.samples[name]?[workload] ?? [] }
        func ms(_ values: [Double]) -> String {
            Statistics.median(values).map { String(format: $0 < 10 ? "%.2f" : "%.1f", $0) } ?? "—"
        }

        let header = [
            "workload", "GQLStore ms", "GRDB ms", "raw C ms", "encrypted ms", "GQL÷GRDB (rounds)", "GQL÷raw (rounds)",
            "enc÷plain (rounds)", "targets",
        ]
        var lines: [[String]] = []
        for workload in Workload.allCases {
            let gql = samples("GQLStore", workload)
            let grdb = samples("GRDB", workload)
            let raw = samples("raw C", workload)
            let encrypted = samples("GQLStore encrypted", workload)
            // Per-round ratios: the implementations of one round ran back to back, on the same machine state.
            let byGRDB = Statistics.ratios(gql, grdb)
            let byRaw = Statistics.ratios(gql, raw)
            let byPlain = Statistics.ratios(encrypted, gql)
            var verdicts: [String] = []
            if let ratio = Statistics.median(byPlain) {
                verdicts.append("encrypted ≤1.15×plain " + (ratio <= 1.15 ? "yes" : "NO"))
            }
            if let ratio = Statistics.median(byGRDB) {
                verdicts.append("≤0.9×GRDB " + (ratio <= 0.9 ? "yes" : "NO"))
            }
            if let ratio = Statistics.median(byRaw), let limit = rawTarget(workload) {
                verdicts.append("≤\(limit == 1.5 ? "1.5" : "2")×raw " + (ratio <= limit ? "yes" : "NO"))
            }
            lines.append([
                workload.label, ms(gql), ms(grdb), ms(raw), ms(encrypted), Statistics.spread(byGRDB),
                Statistics.spread(byRaw), Statistics.spread(byPlain),
                verdicts.isEmpty ? "—" : verdicts.joined(separator: ", "),
            ])
        }
        let widths = header.indices.map { column in
            ([header] + lines).map { $0[column].count }.max() ?? 0
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 || column == cells.count - 1 ? cell + pad : pad + cell
            }.joined(separator: " | ")
        }
        print(render(header))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for line in lines { print(render(line)) }
        print("")
        if !results.errors.isEmpty {
            print("errors:")
            for error in results.errors { print("  \(error)") }
            print("")
        }
    }

    /// GQLStore ≤ 1.5× raw on insert, ≤ 2× raw on fetch; no raw target for the autocommit and observed inserts.
    static func rawTarget(_ workload: Workload) -> Double? {
        switch workload {
        case .insert: 1.5
        case .fetchAll, .fetchAllByRow, .fetchOne, .fetchOneInRead: 2
        case .autocommit, .observedInsert: nil
        }
    }
}

/// Command-line options, read with BenchKit's `Arguments` like the other benchmarks.
struct Options {
    var rows = 100_000
    var rounds = 5
    var warmup = 1
    var only: Set<String> = ["gqlstore", "grdb", "raw"]
    var grdbMode = GRDBStore.Mode.pool
    var verbose = false
    var observers = true
    var help = false

    static let usage = """
        usage: StoreBench [--rows N] [--rounds N] [--no-warmup] [--only gqlstore,grdb,raw,encrypted] [--grdb pool|queue]
                          [--no-observers] [--verbose]
          --rows N        rows per insert / fetchAll workload (default 100000)
          --rounds N      measured rounds, every implementation once per round in rotating order, after one
                          warm-up round; medians are printed (default 5; --runs is the same)
          --no-warmup     no warm-up round (callgrind-store.sh counts one round's instructions)
          --only LIST     comma-separated implementations to run (default: all three); "encrypted" adds
                          GQLStore on an encrypted file (EncryptionBench: --only gqlstore,encrypted)
          --grdb MODE     GRDB writer: pool = DatabasePool (default), queue = DatabaseQueue in WAL mode
          --no-observers  skip the observed-insert workload (callgrind-store.sh measures the others alone)
          --verbose       print every round's timings as it finishes
        """

    init(_ arguments: ArraySlice<String>) throws {
        var arguments = Arguments(arguments)
        while let argument = arguments.next() {
            switch argument {
            case "--rows": rows = try arguments.number(for: argument)
            case "--rounds", "--runs": rounds = try arguments.number(for: argument)
            case "--no-warmup": warmup = 0
            case "--only":
                only = try arguments.list(for: argument, allowed: ["gqlstore", "grdb", "raw", "encrypted"])
            case "--grdb":
                let text = try arguments.value(for: argument)
                guard let mode = GRDBStore.Mode(rawValue: text) else {
                    throw BenchError("--grdb takes pool or queue, not \(text)")
                }
                grdbMode = mode
            case "--verbose", "-v": verbose = true
            case "--no-observers": observers = false
            case "--help", "-h": help = true
            default: throw BenchError("unknown argument \(argument)")
            }
        }
    }
}
