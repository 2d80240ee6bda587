import Dispatch
import Foundation

/// An independent server written in Python (a script under Tests/Interop, run by the .venv's interpreter) for
/// one test: started, its `READY <text>` line awaited, then stopped.
///
/// The peer's standard input is a pipe this object holds open; the peer shuts down when it closes, which is how
/// ``stop(timeout:)`` ends it, and why a test process that dies does not leave a server behind.
public final class PythonPeer: @unchecked Sendable {
    // Safety: every stored property is a constant; ChildProcess is thread-safe.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The package root: this file is <root>/Tests/GQLTestSupport/PythonPeer.swift.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// What followed `READY ` on the peer's ready line (a URL, or JSON with its port and credentials).
    public let ready: String
    private let process: ChildProcess
    private let stderrURL: URL

    /// Runs `Tests/Interop/<script>` with `arguments` and waits (at most `timeout`) for its ready line.
    ///
    /// - Throws: ``Failure`` when .venv is missing (run `make venv`), or the peer exits or stays silent.
    public static func start(_ script: String, _ arguments: [String] = [], timeout: Duration = .seconds(60))
        async throws -> PythonPeer
    {
        let python = root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(
                description: """
                    \(python.path) is missing: run `make venv` (Tests/Interop/setup-venv.sh) to install the Python \
                    test peers into .venv; `make test` and CI do it first.
                    """)
        }
        let stderrURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("python-peer-\(UUID().uuidString).stderr")
        let process = try ChildProcess(
            python.path, [root.appendingPathComponent("Tests/Interop/\(script)").path] + arguments,
            directory: root.path, stdin: .pipe, stdout: .pipe, stderr: .file(stderrURL.path))
        let lines = process.lines()
        let ready = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in lines where line.hasPrefix("READY ") {
                    return String(line.dropFirst("READY ".count))
                }
                return nil  // standard output closed: the peer exited
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let ready else {
            process.kill(SIGKILL)
            _ = await process.wait()
            let message = String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
            try? FileManager.default.removeItem(at: stderrURL)
            throw Failure(description: "\(script) did not get ready within \(timeout); stderr:\n\(message)")
        }
        return PythonPeer(ready: ready, process: process, stderrURL: stderrURL)
    }

    private init(ready: String, process: ChildProcess, stderrURL: URL) {
        self.ready = ready
        self.process = process
        self.stderrURL = stderrURL
    }

    /// What the peer wrote on standard error so far (warnings, Python tracebacks).
    public var stderr: String {
        String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
    }

    /// Closes the peer's standard input (it then shuts down), waits (at most `timeout`) for it to end, and kills
    /// it after that.
    public func stop(timeout: Duration = .seconds(10)) async {
        process.closeStandardInput()
        _ = await process.wait(timeout: timeout)
    }

    deinit {
        process.kill(SIGKILL)
        try? FileManager.default.removeItem(at: stderrURL)
    }

    /// Runs `Tests/Interop/<script>` to its end with `input` on its standard input, and returns its standard output.
    ///
    /// - Throws: ``Failure`` when .venv is missing or the script exits with a non-zero status (its standard error
    ///   in the message).
    public static func run(_ script: String, _ arguments: [String] = [], input: Data) async throws -> Data {
        let python = root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(description: "\(python.path) is missing: run `make venv` (Tests/Interop/setup-venv.sh)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("python-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("in")
        let outputURL = directory.appendingPathComponent("out")
        let errorURL = directory.appendingPathComponent("err")
        try input.write(to: inputURL)
        let process = try ChildProcess(
            python.path, [root.appendingPathComponent("Tests/Interop/\(script)").path] + arguments,
            stdin: .file(inputURL.path), stdout: .file(outputURL.path), stderr: .file(errorURL.path))
        let status = await process.wait()
        guard status == .exited(0) else {
            let message = String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
            throw Failure(description: "\(script) \(status); stderr:\n\(message)")
        }
        return try Data(contentsOf: outputURL)
    }

    /// Runs `body` with the peer started for it, then stops the peer, also when `body` throws.
    public static func with<T>(
        _ script: String, _ arguments: [String] = [], _ body: (PythonPeer) async throws -> T
    ) async throws -> T {
        let peer = try await start(script, arguments)
        do {
            let result = try await body(peer)
            await peer.stop()
            return result
        } catch {
            await peer.stop()
            throw error
        }
    }
}
