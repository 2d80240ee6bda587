import BenchGQLStore
import BenchGRDB
import BenchKit
import BenchRawSQLite
import BenchSQLite
import Foundation

/// `swift run -c release StoreBench [--rows N] [--runs N] [--only gqlstore,grdb,raw] [--grdb pool|queue] [--verbose]`
///
/// Runs the four workloads of README.md for each implementation, `--runs` times each (interleaved, so drift on
/// the machine hits every implementation alike), and prints the medians with the ratios and targets.
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
        if options.only.contains("gqlstore") { implementations.append(GQLStoreBench()) }
        if options.only.contains("grdb") { implementations.append(GRDBStore(mode: options.grdbMode)) }
        if options.only.contains("raw") { implementations.append(RawSQLiteStore()) }

        let data = BenchData(rowCount: options.rows)
        printHeader(options, data)
        let results = Runner(options: options, data: data, implementations: implementations).run()
        printTable(results, implementations)
        for implementation in implementations { print("  " + implementation.details) }
        if !results.errors.isEmpty { exit(1) }
    }

    static func printHeader(_ options: Options, _ data: BenchData) {
        print("StoreBench — GQLStore vs GRDB vs raw SQLite C loop")
        print("date:    \(Date().ISO8601Format())")
        print("machine: nproc \(ProcessInfo.processInfo.activeProcessorCount), CPU \(cpuModel())")
        print("sqlite:  \(String(cString: sqlite3_libversion())) (system libsqlite3, shared by all three)")
        print(
            "data:    \(data.rows.count) rows × 6 columns, \(BenchData.lookupCount) lookups, "
                + "\(BenchData.observerCount) observers (age > \(data.observerThresholds.map(String.init).joined(separator: ","))) "
                + "→ \(data.expectedNotifications) notifications")
        print(
            "runs:    \(options.runs) per workload, median reported; pragmas WAL + synchronous=NORMAL, fresh temp file each run"
        )
        print("")
    }

    static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    static func printTable(_ results: Runner.Results, _ implementations: [any StoreImplementation]) {
        func median(_ name: String, _ workload: Workload) -> Double? {
            guard let samples = results.samples[name]?[workload], !samples.isEmpty else { return nil }
            let sorted = samples.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
        func ms(_ value: Double?) -> String { value.map { String(format: $0 < 10 ? "%.2f" : "%.1f", $0) } ?? "—" }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b > 0 else { return "—" }
            return String(format: "%.2f", a / b)
        }

        let header = ["workload", "GQLStore ms", "GRDB ms", "raw C ms", "GQL/GRDB", "GQL/raw", "targets"]
        var lines: [[String]] = []
        for workload in Workload.allCases {
            let gql = median("GQLStore", workload)
            let grdb = median("GRDB", workload)
            let raw = median("raw C", workload)
            var verdicts: [String] = []
            if let gql, let grdb {
                verdicts.append("≤0.9×GRDB " + (gql <= 0.9 * grdb ? "yes" : "NO"))
            }
            if let gql, let raw, let limit = rawTarget(workload) {
                verdicts.append("≤\(limit == 1.5 ? "1.5" : "2")×raw " + (gql <= limit * raw ? "yes" : "NO"))
            }
            lines.append([
                workload.label, ms(gql), ms(grdb), ms(raw), ratio(gql, grdb), ratio(gql, raw),
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

    /// GQLStore ≤ 1.5× raw on insert, ≤ 2× raw on fetch; no raw target for the observed insert.
    static func rawTarget(_ workload: Workload) -> Double? {
        switch workload {
        case .insert: 1.5
        case .fetchAll, .fetchAllByRow, .fetchOne, .fetchOneInRead: 2
        case .observedInsert: nil
        }
    }
}

/// Command-line options, parsed by hand (no argument-parser dependency in the benchmark package).
struct Options {
    var rows = 100_000
    var runs = 5
    var only: Set<String> = ["gqlstore", "grdb", "raw"]
    var grdbMode = GRDBStore.Mode.pool
    var verbose = false
    var observers = true
    var help = false

    static let usage = """
        usage: StoreBench [--rows N] [--runs N] [--only gqlstore,grdb,raw] [--grdb pool|queue] [--no-observers] [--verbose]
          --rows N     rows per insert / fetchAll workload (default 100000)
          --runs N     repetitions of every workload; the median is printed (default 5)
          --only LIST  comma-separated implementations to run (default: all three)
          --grdb MODE  GRDB writer: pool = DatabasePool (default), queue = DatabaseQueue in WAL mode
          --no-observers  skip the observed-insert workload (callgrind-store.sh measures the others alone)
          --verbose    print every run's timings as it finishes
        """

    init<Arguments: Collection<String>>(_ arguments: Arguments) throws {
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let value = iterator.next() else { throw BenchError("\(flag) needs a value") }
            return value
        }
        func positive(_ flag: String) throws -> Int {
            let text = try value(flag)
            guard let number = Int(text), number > 0 else {
                throw BenchError("\(flag) needs a positive integer, got '\(text)'")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--rows": rows = try positive(argument)
            case "--runs": runs = try positive(argument)
            case "--only":
                only = Set(try value(argument).lowercased().split(separator: ",").map(String.init))
                let unknown = only.subtracting(["gqlstore", "grdb", "raw"])
                guard unknown.isEmpty, !only.isEmpty else {
                    throw BenchError("--only takes gqlstore, grdb, raw; got \(unknown.sorted())")
                }
            case "--grdb":
                let text = try value(argument)
                guard let mode = GRDBStore.Mode(rawValue: text) else {
                    throw BenchError("--grdb takes pool or queue, got '\(text)'")
                }
                grdbMode = mode
            case "--verbose", "-v": verbose = true
            case "--no-observers": observers = false
            case "--help", "-h": help = true
            default: throw BenchError("unknown argument '\(argument)'")
            }
        }
    }
}
