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
        return hash + (changed?.isEmpty == false ? " +changes" : "") + (binaryIsStale() ? staleNote : "")
    }

    /// Said after the commit when a source file is newer than the running executable: git describes the working
    /// tree as it is now, and the binary was built from an older one.
    static let staleNote = " (sources changed after this binary was built: the commit may not be what it runs)"

    /// Whether a file under `Sources/` or `Benchmarks/Sources/` (or a `Package.swift`) was modified after the
    /// running executable was written. Conservative: a change to a module this benchmark does not link counts too.
    static func binaryIsStale() -> Bool {
        let files = FileManager.default
        guard let executable = Bundle.main.executableURL,
            let built = try? executable.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate
        else { return false }
        func newer(_ url: URL) -> Bool {
            (try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate).map { $0 > built }
                ?? false
        }
        let manifests = ["Package.swift", "Benchmarks/Package.swift"].map { Peers.root.appendingPathComponent($0) }
        if manifests.contains(where: newer) { return true }
        for folder in ["Sources", "Benchmarks/Sources"] {
            let top = Peers.root.appendingPathComponent(folder)
            guard let walk = files.enumerator(at: top, includingPropertiesForKeys: [.contentModificationDateKey])
            else { continue }
            for case let url as URL in walk where newer(url) { return true }
        }
        return false
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
