import BenchKit
import BenchRawSQLite
import Foundation

/// Runs every implementation through the workloads in interleaved rounds and checks each result.
///
/// Each round runs every implementation once, one after the other, the first of the previous round moving to the
/// end (GQLStore, GRDB, raw; then GRDB, raw, GQLStore; …), so that neither a slow start nor drift on the machine
/// favours one of them. The warm-up rounds run and are checked like the others, and are not recorded.
struct Runner {
    struct Results {
        /// implementation name → workload → milliseconds, one sample per measured round, in round order (an
        /// implementation that failed stops, so the samples of round `i` stay at index `i` for all of them).
        var samples: [String: [Workload: [Double]]] = [:]
        var errors: [String] = []
    }

    let options: Options
    let data: BenchData
    let implementations: [any StoreImplementation]

    func run() -> Results {
        var results = Results()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("storebench-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var failed: Set<String> = []
        for round in 0..<(options.warmup + options.rounds) {
            let measured = round >= options.warmup
            let label = measured ? "round \(round - options.warmup + 1)" : "warm-up \(round + 1)"
            let first = implementations.isEmpty ? 0 : round % implementations.count
            let order = implementations[first...] + implementations[..<first]
            for implementation in order where !failed.contains(implementation.name) {
                do {
                    let timings = try runOnce(implementation, run: round, directory: directory)
                    if measured {
                        for (workload, milliseconds) in timings {
                            results.samples[implementation.name, default: [:]][workload, default: []]
                                .append(milliseconds)
                        }
                    }
                    if options.verbose {
                        let text = Workload.allCases.map { String(format: "%.1f", timings[$0] ?? .nan) }
                        print("\(label) \(implementation.name): \(text.joined(separator: " / ")) ms")
                    }
                } catch {
                    failed.insert(implementation.name)
                    results.errors.append("\(implementation.name), \(label): \(error)")
                    try? implementation.close()
                }
            }
        }
        return results
    }

    private func runOnce(
        _ implementation: any StoreImplementation, run: Int, directory: URL
    ) throws -> [Workload: Double] {
        var timings: [Workload: Double] = [:]
        let slug = implementation.name.lowercased().filter(\.isLetter)

        // Workloads 1-3c on one fresh file.
        let path = try freshPath(directory, "\(slug)-\(run).sqlite")
        try implementation.prepare(data, path: path)
        try check(isWAL(path), "\(path) is not in WAL mode after prepare")
        let (inserted, insertTime) = try measure { try implementation.insert() }
        try check(inserted == data.rows.count, "inserted \(inserted) rows, expected \(data.rows.count)")
        timings[.insert] = insertTime
        let (fetched, fetchAllTime) = try measure { try implementation.fetchAll() }
        try check(fetched == data.rows.count, "fetchAll returned \(fetched) rows, expected \(data.rows.count)")
        timings[.fetchAll] = fetchAllTime
        try checkRows(implementation, data.rows, "fetchAll")
        let (fetchedByRow, byRowTime) = try measure { try implementation.fetchAllByRow() }
        try check(
            fetchedByRow == data.rows.count,
            "fetchAll by row returned \(fetchedByRow) rows, expected \(data.rows.count)")
        timings[.fetchAllByRow] = byRowTime
        try checkRows(implementation, data.rows, "fetchAll by row")
        let (ageSum, fetchOneTime) = try measure { try implementation.fetchOne() }
        try check(ageSum == data.lookupAgeSum, "fetchOne age checksum \(ageSum), expected \(data.lookupAgeSum)")
        timings[.fetchOne] = fetchOneTime
        try checkLookups(implementation, data, "fetchOne")
        let (ageSumInRead, inReadTime) = try measure { try implementation.fetchOneInRead() }
        try check(ageSumInRead == data.lookupAgeSum, "fetchOne in one read: age checksum \(ageSumInRead)")
        timings[.fetchOneInRead] = inReadTime
        try checkLookups(implementation, data, "fetchOne in one read")
        let (singles, autocommitTime) = try measure { try implementation.autocommitInsert() }
        try check(singles == data.autocommitRows.count, "autocommit: inserted \(singles) rows")
        timings[.autocommit] = autocommitTime
        // Untimed: every row, the single ones included, reads back as inserted.
        _ = try implementation.fetchAll()
        try checkRows(implementation, data.rows + data.autocommitRows, "fetchAll after the autocommit inserts")
        try implementation.close()
        removeDatabase(path)

        guard options.observers else { return timings }

        // Workload 4 on another fresh file, observers registered before the clock starts.
        let observedPath = try freshPath(directory, "\(slug)-\(run)-observed.sqlite")
        try implementation.prepare(data, path: observedPath)
        let sink = NotificationSink(observerCount: BenchData.observerCount)
        try implementation.registerObservers(sink)
        let (observedInserted, observedTime) = try measure { try implementation.observedInsert() }
        try check(observedInserted == data.rows.count, "observed insert: \(observedInserted) rows")
        try check(
            sink.delivered == data.expectedNotifications,
            "observers got \(sink.delivered) notifications, expected \(data.expectedNotifications)")
        for (index, threshold) in data.observerThresholds.enumerated() {
            let expected = data.rows.lazy.filter { $0.age > threshold }.count
            try check(
                sink.delivered(observer: index) == expected,
                "observer \(index) (age > \(threshold)) got \(sink.delivered(observer: index)), expected \(expected)")
        }
        timings[.observedInsert] = observedTime
        try implementation.close()
        removeDatabase(observedPath)
        return timings
    }

    private func measure<T>(_ body: () throws -> T) throws -> (T, Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let value = try body()
        let elapsed = clock.now - start
        let (seconds, attoseconds) = elapsed.components
        return (value, Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
    }

    /// Every fetched value equals the inserted one (`expected`, in primary-key order).
    private func checkRows(
        _ implementation: any StoreImplementation, _ expected: [BenchData.Row], _ workload: String
    ) throws {
        let rows = implementation.fetchedRows().sorted { $0.id < $1.id }
        try check(rows.count == expected.count, "\(workload): \(rows.count) rows, expected \(expected.count)")
        if let index = rows.indices.first(where: { rows[$0] != expected[$0] }) {
            throw BenchError("\(workload): row \(index) is \(rows[index]), expected \(expected[index])")
        }
    }

    /// Every looked-up row equals the inserted row of its key, field by field, in lookup order.
    private func checkLookups(_ implementation: any StoreImplementation, _ data: BenchData, _ workload: String) throws {
        let rows = implementation.fetchedRows()
        try check(
            rows.count == data.lookupKeys.count, "\(workload): \(rows.count) rows, expected \(data.lookupKeys.count)")
        if let index = rows.indices.first(where: { rows[$0] != data.rows[data.lookupKeys[$0] - 1] }) {
            throw BenchError(
                "\(workload): lookup \(index) is \(rows[index]), expected \(data.rows[data.lookupKeys[index] - 1])")
        }
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw BenchError(message()) }
    }

    private func freshPath(_ directory: URL, _ file: String) throws -> String {
        let path = directory.appendingPathComponent(file).path
        removeDatabase(path)
        return path
    }

    private func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

/// Whether the file at `path` is in WAL mode: SQLite says so for a plain file; an encrypted one (which SQLite cannot
/// open without its key) keeps the header's file-format bytes 18 and 19 in clear, 2 and 2 in WAL mode.
func isWAL(_ path: String) -> Bool {
    if journalMode(ofFile: path) == "wal" { return true }
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    let header = [UInt8]((try? handle.read(upToCount: 20)) ?? Data())
    return header.count == 20 && header[18] == 2 && header[19] == 2
}
