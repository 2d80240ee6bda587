import Foundation

/// A Python script of the repository kept running for a whole benchmark run: one request line written to its
/// standard input, one answer line read from its standard output, so every timed loop on the Python side runs in a
/// warm interpreter (imports done, caches filled), as a server's would. The script ends at the end of its input:
/// ``close()`` (or the end of this process) closes it.
///
/// ```swift
/// let peer = try PeerLoop("Benchmarks/Server/jwt_bench_peer.py", ["pyjwt"])
/// let answer = try peer.ask("/tmp/tokens.json")   // one line of JSON
/// peer.close()
/// ```
public final class PeerLoop {
    private let script: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered: [UInt8] = []

    /// Starts `script` (a path from the repository root) with the .venv's Python.
    public init(_ script: String, _ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Peers.python.path) else {
            throw BenchError("\(Peers.python.path) is missing: run `make venv` first")
        }
        self.script = script
        process.executableURL = Peers.python
        process.arguments = [Peers.root.appendingPathComponent(script).path] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    deinit { close() }

    /// Writes `request` as one line and returns the script's one-line answer (without its newline).
    public func ask(_ request: String) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((request + "\n").utf8))
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchError("\(script) ended before it answered \(request)") }
            buffered.append(contentsOf: chunk)
        }
    }

    /// Closes the script's input, which ends it, and waits for it.
    public func close() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
