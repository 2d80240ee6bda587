import Dispatch
import Foundation
import GQLTestSupport
import Testing

/// A Strawberry GraphQL server (Tests/Interop/strawberry_peer.py) run by the venv's Python for one test: started,
/// its `READY` line awaited, then terminated.
///
/// The peer's standard input is a pipe this object holds open; the peer shuts down when it closes, which is how
/// ``stop(timeout:)`` ends it, and why a test process that dies does not leave a server behind.
final class StrawberryPeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The package root: this file is <root>/Tests/GQLNetTests/StrawberryPeer.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `http://127.0.0.1:PORT/graphql`.
    let http: String
    /// `ws://127.0.0.1:PORT/graphql`.
    let webSocket: String
    private let process: Process
    private let stdin: Pipe
    private let stderrURL: URL

    /// Starts the peer and waits (at most `timeout`) for it to listen.
    ///
    /// - Throws: ``Failure`` when .venv is missing (run `make venv`), or the peer exits or stays silent.
    /// - Parameter script: the peer under Tests/Interop; websocket_peer.py is the plain WebSocket server of the
    ///   transport tests.
    static func start(
        _ arguments: [String] = [], script: String = "strawberry_peer.py", timeout: Duration = .seconds(60)
    ) async throws -> StrawberryPeer {
        let python = root.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw Failure(
                description: """
                    \(python.path) is missing: run `make venv` (Tests/Interop/setup-venv.sh) to install the Python \
                    test peers (Strawberry GraphQL, uvicorn) into .venv; `make test` and CI do it first.
                    """)
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [root.appendingPathComponent("Tests/Interop/\(script)").path] + arguments
        process.currentDirectoryURL = root
        let stderrURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("strawberry-peer-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        defer { try? stderr.close() }
        let stdout = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()

        let lines = stdout.fileHandleForReading.lines()
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
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let message = String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
            try? FileManager.default.removeItem(at: stderrURL)
            throw Failure(description: "\(script) did not get ready within \(timeout); stderr:\n\(message)")
        }
        return StrawberryPeer(http: ready, process: process, stdin: stdin, stderrURL: stderrURL)
    }

    private init(http: String, process: Process, stdin: Pipe, stderrURL: URL) {
        self.http = http
        self.webSocket = http.replacingOccurrences(of: "http://", with: "ws://")
        self.process = process
        self.stdin = stdin
        self.stderrURL = stderrURL
    }

    /// What the peer wrote on standard error so far (uvicorn warnings, Python tracebacks).
    var stderr: String {
        String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
    }

    /// Closes the peer's standard input (it then shuts down), waits (at most `timeout`) for it to end, and kills it
    /// after that.
    ///
    /// Not SIGTERM: on Linux the child inherits the blocked-signal mask of the test thread that spawned it, which
    /// blocks SIGTERM and SIGINT (seen in the peer's /proc/PID/status `SigBlk`), so Python never sees them.
    func stop(timeout: Duration = .seconds(10)) async {
        try? stdin.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: stderrURL)
    }
}

/// Runs `body` with a Strawberry peer started for it, then stops the peer, also when `body` throws.
func withStrawberryPeer<T>(_ arguments: [String] = [], _ body: (StrawberryPeer) async throws -> T) async throws -> T {
    let peer = try await StrawberryPeer.start(arguments)
    do {
        let result = try await body(peer)
        await peer.stop()
        return result
    } catch {
        await peer.stop()
        throw error
    }
}
