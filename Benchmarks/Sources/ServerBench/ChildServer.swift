import BenchKit
import Dispatch
import Foundation

/// A GraphQL server under test, running as a child process that prints `HTTP      http://…` and
/// `WebSocket ws://…` once it listens (and may print a `config    …` line before them), and stops on SIGINT.
final class ChildServer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let name: String
    let http: String
    let webSocket: String
    /// What the child's `config` line said about its setup, if it printed one.
    let configuration: String?
    private let process: Process
    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Starts `executable arguments…` (with `environment` added to this process's) and waits (at most `timeout`)
    /// for its endpoint lines.
    init(
        name: String, executable: URL, arguments: [String], environment: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) async throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let lines = Self.lines(of: stdout.fileHandleForReading)
        let found = try await withThrowingTaskGroup(of: [String]?.self) { group in
            group.addTask {
                var found: [String] = []
                for await line in lines
                where line.hasPrefix("HTTP ") || line.hasPrefix("WebSocket ") || line.hasPrefix("config ") {
                    found.append(line)
                    if found.filter({ !$0.hasPrefix("config ") }).count == 2 { return found }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            throw Failure(description: "\(name) printed no endpoints within \(timeout)")
        }
        func url(_ prefix: String) -> String {
            String(found.first { $0.hasPrefix(prefix) }?.split(separator: " ").last ?? "")
        }
        self.name = name
        self.http = url("HTTP ")
        self.webSocket = url("WebSocket ")
        self.configuration = found.first { $0.hasPrefix("config ") }.map {
            String($0.dropFirst("config".count)).trimmingCharacters(in: .whitespaces)
        }
        self.process = process
    }

    /// Starts `executable arguments…`, a server that prints nothing, and waits (at most `timeout`) until it accepts
    /// connections on the loopback `port`; its endpoint is `http://127.0.0.1:port/path`.
    init(
        name: String, executable: URL, arguments: [String], port: Int, path: String, configuration: String,
        timeout: Duration = .seconds(30)
    ) async throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while !Loopback.accepts(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
                throw Failure(description: "\(name) did not listen on port \(port) within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        self.name = name
        self.http = "http://127.0.0.1:\(port)\(path)"
        self.webSocket = "ws://127.0.0.1:\(port)\(path)"
        self.configuration = configuration
        self.process = process
    }

    /// The lines a pipe delivers, read on a dispatch thread until it closes.
    private static func lines(of handle: FileHandle) -> AsyncStream<String> {
        AsyncStream { continuation in
            DispatchQueue.global().async {
                var pending = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending.removeSubrange(...newline)
                    }
                }
                continuation.finish()
            }
        }
    }

    /// SIGINT, then SIGKILL if it has not stopped within 10 s.
    func stop() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGINT)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
