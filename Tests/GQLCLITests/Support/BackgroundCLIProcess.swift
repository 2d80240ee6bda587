import Foundation
import GQLTestSupport

/// A `gql-cli` child process left running while the test does other things (`subscribe`), with its output in
/// files that can be read at any time.
final class BackgroundCLIProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: ChildProcess
    private let scratch: TemporaryDirectory
    private let arguments: [String]

    /// Starts `gql-cli arguments…`.
    init(_ arguments: [String]) throws {
        self.arguments = arguments
        scratch = try TemporaryDirectory()
        process = try ChildProcess(
            try CLIProcess.executable().path, arguments, stdout: .file(scratch.path("stdout")),
            stderr: .file(scratch.path("stderr")))
    }

    var isRunning: Bool { process.isRunning }

    /// The process's peak resident memory so far (`VmHWM` of /proc/PID/status), in bytes; `nil` once it ended or
    /// where there is no /proc.
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8) else {
            return nil
        }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        let kilobytes = line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        return kilobytes.map { $0 * 1024 }
    }

    /// What the process wrote on standard output so far.
    var stdout: String { scratch.read("stdout") }

    /// What the process wrote on standard error so far.
    var stderr: String { scratch.read("stderr") }

    /// The complete lines on standard output so far.
    var lines: [String] {
        let text = stdout
        guard let last = text.lastIndex(of: "\n") else { return [] }
        return text[..<last].split(separator: "\n").map(String.init)
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        process.kill(signal)
    }

    /// Waits (at most `timeout`) for the process to end and returns how it ended; kills it and throws when it
    /// did not end in time.
    func wait(timeout: Duration = .seconds(30)) async throws -> CLIProcess.Output {
        let (termination, timedOut) = await process.wait(timeout: timeout)
        if timedOut {
            throw Failure(description: "gql-cli \(arguments) did not end within \(timeout); stderr: \(stderr)")
        }
        return CLIProcess.Output(termination, stdout: stdout, stderr: stderr)
    }

    deinit {
        process.kill(SIGKILL)
    }
}
