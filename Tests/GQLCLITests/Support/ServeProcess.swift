import Dispatch
import Foundation
import GQLTestSupport
import Testing

/// A `gql-cli serve` child process: started, its endpoint lines read, then stopped with a signal.
final class ServeProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What the server printed before it listened: `HTTP      http://…` and `WebSocket ws://…`.
    let http: String
    let webSocket: String
    private let process: ChildProcess
    private let stderrURL: URL
    private let scratch: TemporaryDirectory

    /// Starts `gql-cli serve arguments…` and waits (at most `timeout`) for its endpoint lines.
    static func start(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ServeProcess {
        let scratch = try TemporaryDirectory()
        let stderrURL = scratch.url.appendingPathComponent("stderr")
        let process = try ChildProcess(
            try CLIProcess.executable().path, ["serve"] + arguments, stdout: .pipe, stderr: .file(stderrURL.path))
        let lines = process.lines()
        let endpoints = try await withThrowingTaskGroup(of: [String]?.self) { group in
            group.addTask {
                var found: [String] = []
                for await line in lines {
                    if line.hasPrefix("HTTP ") || line.hasPrefix("WebSocket ") { found.append(line) }
                    if found.count == 2 { return found }
                }
                return nil  // standard output closed: the server exited
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let endpoints else {
            process.kill(SIGTERM)
            _ = await process.wait(timeout: .seconds(10))
            let message = String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
            throw Failure(description: "gql-cli serve printed no endpoints within \(timeout); stderr: \(message)")
        }
        func url(_ line: String) -> String {
            String(line.split(separator: " ", omittingEmptySubsequences: true).last ?? "")
        }
        return ServeProcess(
            http: url(endpoints[0]), webSocket: url(endpoints[1]), process: process, stderrURL: stderrURL,
            scratch: scratch)
    }

    private init(http: String, webSocket: String, process: ChildProcess, stderrURL: URL, scratch: TemporaryDirectory) {
        self.http = http
        self.webSocket = webSocket
        self.process = process
        self.stderrURL = stderrURL
        self.scratch = scratch
    }

    /// What the server wrote on standard error so far.
    var stderr: String {
        String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self)
    }

    /// Sends `signal` and waits (at most `timeout`) for the process to end. Returns its exit status, or
    /// throws when it did not end (it is then killed) or died of a signal.
    func stop(with signal: Int32 = SIGINT, timeout: Duration = .seconds(20)) async throws -> Int32 {
        process.kill(signal)
        let (termination, timedOut) = await process.wait(timeout: timeout)
        if timedOut {
            throw Failure(description: "gql-cli serve did not stop within \(timeout) of signal \(signal)")
        }
        guard case .exited(let status) = termination else {
            throw Failure(description: "gql-cli serve was \(termination)")
        }
        return status
    }

    /// Kills the process with SIGKILL (no handler runs, nothing is cleaned up) and waits until it is gone.
    func kill() async -> ChildProcess.Termination {
        process.kill(SIGKILL)
        return await process.wait()
    }

    deinit {
        process.kill(SIGKILL)
    }
}
