import Foundation

/// What a figure was measured on: the date, the commit of the code measured, the machine and its load. Every
/// benchmark prints these lines above its table, so that a figure copied into the docs carries them.
public enum BenchEnvironment {
    /// `date:`, `commit:` and `machine:` lines.
    public static func header() -> [String] {
        [
            "date:    \(Date().ISO8601Format())",
            "commit:  \(commit())",
            "machine: \(processor()), nproc \(ProcessInfo.processInfo.activeProcessorCount), "
                + "load average \(loadAverage())",
        ]
    }

    /// /proc/loadavg's first three figures, or `unknown`.
    public static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The CPU's model name from /proc/cpuinfo, or `unknown CPU`.
    public static func processor() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let name = line.split(separator: ":", maxSplits: 1).last
        else { return "unknown CPU" }
        return name.trimmingCharacters(in: .whitespaces)
    }

    /// The repository's short commit hash, `+changes` when the sources measured differ from it, or why it is
    /// unknown (a copy without `.git`: set `BENCH_COMMIT` to name it).
    public static func commit() -> String {
        if let named = ProcessInfo.processInfo.environment["BENCH_COMMIT"], !named.isEmpty { return named }
        guard let hash = git(["rev-parse", "--short", "HEAD"])?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            return "unknown (not a git checkout; BENCH_COMMIT=… names it)"
        }
        let changed = git(["status", "--porcelain", "--untracked-files=no", "--", "Sources", "Benchmarks"])
        return hash + (changed?.isEmpty == false ? " +changes" : "")
    }

    private static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", Peers.root.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
