import Foundation

/// Marks one kind of timed section for valgrind's callgrind, so a benchmark's work can be counted in instructions
/// (steady on a shared machine, where wall time swings by 10–30 %) across every thread of the process: the client,
/// the in-process server and their event loops.
///
/// `BENCH_CALLGRIND=<section>[,<section>…]` names the sections; every `start(_:)` of one calls
/// `benchkitCallgrindStart()` and every `stop(_:operations:)` calls `benchkitCallgrindStop()`. A section's work
/// runs in tasks that hop between threads, which `--toggle-collect` cannot follow, but `--dump-before` on both
/// functions can: each section becomes one dump file (the one its stop triggers) holding what every thread did
/// inside it. `stop` also prints `callgrind-section <name> <operations>` on standard error, one line per section in
/// the dumps' order, so that `Benchmarks/callgrind-values.sh` can add each section's dumps and divide by its
/// operations. Other sections, and every run without the variable, call neither function.
///
/// `BENCH_RUSAGE=<section>[,<section>…]` (without valgrind) measures the same sections with the kernel's and the
/// allocator's own counts, which instructions do not show: `stop` prints `rusage-section <name> <minor faults>
/// <major faults> <user µs> <system µs> <involuntary switches> <resident KiB>` on standard error (the process's
/// `getrusage` and its resident set from `/proc/self/statm`, each the difference across the section).
public enum CallgrindSection {
    /// The sections named by `BENCH_CALLGRIND` (comma-separated), none without it.
    public static let selected = Set(
        (ProcessInfo.processInfo.environment["BENCH_CALLGRIND"] ?? "").split(separator: ",").map(String.init))
    /// The sections named by `BENCH_RUSAGE` (comma-separated), none without it.
    public static let measured = Set(
        (ProcessInfo.processInfo.environment["BENCH_RUSAGE"] ?? "").split(separator: ",").map(String.init))

    /// Starts a section (callgrind dumps what ran before it here when asked to).
    public static func start(_ name: String) {
        if measured.contains(name) { ResourceCounts.started = ResourceCounts.now() }
        guard selected.contains(name) else { return }
        benchkitCallgrindStart()
    }

    /// Ends a section of `operations` operations (callgrind dumps the section's counts here when asked to).
    public static func stop(_ name: String, operations: Int) {
        if measured.contains(name) {
            let spent = ResourceCounts.now() - ResourceCounts.started
            FileHandle.standardError.write(Data("rusage-section \(name) \(spent)\n".utf8))
        }
        guard selected.contains(name) else { return }
        benchkitCallgrindStop()
        FileHandle.standardError.write(Data("callgrind-section \(name) \(operations)\n".utf8))
    }
}

/// The process's page faults, CPU times and involuntary context switches (`getrusage`), and its resident set.
struct ResourceCounts: CustomStringConvertible {
    var minorFaults = 0
    var majorFaults = 0
    var userMicroseconds = 0
    var systemMicroseconds = 0
    var involuntarySwitches = 0
    var residentKiB = 0

    /// The counts at a section's start (sections do not nest; benchmarks run them on one thread).
    nonisolated(unsafe) static var started = ResourceCounts()

    static func now() -> ResourceCounts {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return ResourceCounts(
            minorFaults: usage.ru_minflt, majorFaults: usage.ru_majflt,
            userMicroseconds: usage.ru_utime.tv_sec * 1_000_000 + usage.ru_utime.tv_usec,
            systemMicroseconds: usage.ru_stime.tv_sec * 1_000_000 + usage.ru_stime.tv_usec,
            involuntarySwitches: usage.ru_nivcsw, residentKiB: resident())
    }

    /// The resident set in KiB (the second field of `/proc/self/statm`, in pages); 0 where there is none.
    static func resident() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    static func - (lhs: ResourceCounts, rhs: ResourceCounts) -> ResourceCounts {
        ResourceCounts(
            minorFaults: lhs.minorFaults - rhs.minorFaults, majorFaults: lhs.majorFaults - rhs.majorFaults,
            userMicroseconds: lhs.userMicroseconds - rhs.userMicroseconds,
            systemMicroseconds: lhs.systemMicroseconds - rhs.systemMicroseconds,
            involuntarySwitches: lhs.involuntarySwitches - rhs.involuntarySwitches,
            residentKiB: lhs.residentKiB - rhs.residentKiB)
    }

    var description: String {
        "\(minorFaults) \(majorFaults) \(userMicroseconds) \(systemMicroseconds) \(involuntarySwitches) \(residentKiB)"
    }
}

/// How many sections began and ended: side effects, so the optimizer keeps the calls to the two marker functions,
/// and different ones, so it cannot fold the two into one (callgrind would then see each start enter the stop).
nonisolated(unsafe) private var started = 0
nonisolated(unsafe) private var stopped = 0

/// The function `--dump-before` names for a section's start: the dump then holds what ran before it.
@inline(never)
func benchkitCallgrindStart() { started &+= 1 }

/// The function `--dump-before` names for a section's end: the dump then holds the section.
@inline(never)
func benchkitCallgrindStop() { stopped &+= 1 }
