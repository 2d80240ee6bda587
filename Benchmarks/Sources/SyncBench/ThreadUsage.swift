import Foundation

/// The process's threads as the kernel counts them (`/proc/self/task/*/schedstat` and `status`): CPU time, time spent
/// runnable but waiting for a core, and context switches, per thread name. For `SYNCBENCH_THREADS=1` runs, which
/// print what each contender cost per item on every kind of thread (the client's and the server's event loops, the
/// task threads …): a hand-off shows as a voluntary switch, a core shared with other work as run-queue wait.
struct ThreadUsage {
    struct Counts {
        var name: String
        var threads = 1
        var runNanoseconds: Int64 = 0
        var waitNanoseconds: Int64 = 0
        var voluntary: Int64 = 0
        var involuntary: Int64 = 0
    }

    var byThread: [Int: Counts] = [:]

    static var enabled: Bool { ProcessInfo.processInfo.environment["SYNCBENCH_THREADS"] == "1" }

    /// Every thread of the process now.
    static func now() -> ThreadUsage {
        var usage = ThreadUsage()
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return usage }
        for tid in tids {
            guard let id = Int(tid),
                let sched = try? String(contentsOfFile: "/proc/self/task/\(tid)/schedstat", encoding: .utf8),
                let status = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)
            else { continue }
            let fields = sched.split(separator: " ").compactMap {
                Int64($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            var counts = Counts(name: "?")
            for line in status.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                switch parts[0] {
                case "Name": counts.name = parts[1]
                case "voluntary_ctxt_switches": counts.voluntary = Int64(parts[1]) ?? 0
                case "nonvoluntary_ctxt_switches": counts.involuntary = Int64(parts[1]) ?? 0
                default: break
                }
            }
            if fields.count >= 2 {
                counts.runNanoseconds = fields[0]
                counts.waitNanoseconds = fields[1]
            }
            usage.byThread[id] = counts
        }
        return usage
    }

    /// What each kind of thread did since `earlier`, per item, one line per thread name plus a total.
    /// Adds what each thread used between `earlier` and `later` (a contender timed in several slices).
    mutating func add(_ later: ThreadUsage, since earlier: ThreadUsage) {
        for (tid, counts) in later.byThread {
            let before = earlier.byThread[tid]
            var sum = byThread[tid] ?? Counts(name: counts.name)
            sum.runNanoseconds += counts.runNanoseconds - (before?.runNanoseconds ?? 0)
            sum.waitNanoseconds += counts.waitNanoseconds - (before?.waitNanoseconds ?? 0)
            sum.voluntary += counts.voluntary - (before?.voluntary ?? 0)
            sum.involuntary += counts.involuntary - (before?.involuntary ?? 0)
            byThread[tid] = sum
        }
    }

    func report(since earlier: ThreadUsage, items: Int) -> [String] {
        var groups: [String: Counts] = [:]
        for (tid, counts) in byThread {
            let before = earlier.byThread[tid]
            let run = counts.runNanoseconds - (before?.runNanoseconds ?? 0)
            let wait = counts.waitNanoseconds - (before?.waitNanoseconds ?? 0)
            let voluntary = counts.voluntary - (before?.voluntary ?? 0)
            let involuntary = counts.involuntary - (before?.involuntary ?? 0)
            guard run > 0 || voluntary > 0 else { continue }
            // Numbered threads of one kind (NIO-ELT-0-#1) are told apart; pool threads are summed by name.
            var group = groups[counts.name] ?? Counts(name: counts.name, threads: 0)
            group.threads += 1
            group.runNanoseconds += run
            group.waitNanoseconds += wait
            group.voluntary += voluntary
            group.involuntary += involuntary
            groups[counts.name] = group
        }
        let n = Double(max(items, 1))
        var total = Counts(name: "total", threads: 0)
        var lines: [String] = []
        for group in groups.values.sorted(by: { $0.runNanoseconds > $1.runNanoseconds }) {
            total.threads += group.threads
            total.runNanoseconds += group.runNanoseconds
            total.waitNanoseconds += group.waitNanoseconds
            total.voluntary += group.voluntary
            total.involuntary += group.involuntary
            lines.append(Self.line(group, n))
        }
        lines.append(Self.line(total, n))
        return lines
    }

    private static func line(_ counts: Counts, _ n: Double) -> String {
        String(
            format: "    %-22@ ×%2d  cpu %6.1f µs  runnable-waiting %5.1f µs  switches %4.2f voluntary %4.2f forced",
            counts.name as NSString, counts.threads, Double(counts.runNanoseconds) / n / 1000,
            Double(counts.waitNanoseconds) / n / 1000, Double(counts.voluntary) / n, Double(counts.involuntary) / n)
    }
}

/// Turns a `perf record -D -1 --control fifo:PATH` on for the timed sections only, when `SYNCBENCH_PERF_FIFO`
/// names its control fifo: a profile of the drains without the queueing before them.
enum PerfControl {
    private static let fifo = ProcessInfo.processInfo.environment["SYNCBENCH_PERF_FIFO"]

    static func enable() { send("enable\n") }
    static func disable() { send("disable\n") }

    private static func send(_ command: String) {
        guard let fifo, let handle = FileHandle(forWritingAtPath: fifo) else { return }
        handle.write(Data(command.utf8))
        try? handle.close()
    }
}
