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
public enum CallgrindSection {
    /// The sections named by `BENCH_CALLGRIND` (comma-separated), none without it.
    public static let selected = Set(
        (ProcessInfo.processInfo.environment["BENCH_CALLGRIND"] ?? "").split(separator: ",").map(String.init))

    /// Starts a section (callgrind dumps what ran before it here when asked to).
    public static func start(_ name: String) {
        guard selected.contains(name) else { return }
        benchkitCallgrindStart()
    }

    /// Ends a section of `operations` operations (callgrind dumps the section's counts here when asked to).
    public static func stop(_ name: String, operations: Int) {
        guard selected.contains(name) else { return }
        benchkitCallgrindStop()
        FileHandle.standardError.write(Data("callgrind-section \(name) \(operations)\n".utf8))
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
