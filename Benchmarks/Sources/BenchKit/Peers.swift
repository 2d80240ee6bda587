import Foundation

/// The repository's Python side of the benchmarks: scripts run with the .venv's interpreter (`make venv`).
public enum Peers {
    /// The repository root: this file is <root>/Benchmarks/Sources/BenchKit/Peers.swift.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    public static let python = root.appendingPathComponent(".venv/bin/python")

    /// Runs a Python script of the repository (a path from the root) to its end and returns its standard output,
    /// trimmed; its standard error goes to ours.
    public static func run(_ script: String, _ arguments: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw BenchError("\(python.path) is missing: run `make venv` first")
        }
        let (status, output) = try capture(python, [root.appendingPathComponent(script).path] + arguments)
        guard status == 0 else { throw BenchError("\(script) \(arguments) failed") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `executable` with `arguments` (in `directory`, else ours) to its end and returns its exit status and
    /// standard output; its standard error goes to `errors` (ours by default).
    public static func capture(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil, errors: FileHandle = .standardError
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
