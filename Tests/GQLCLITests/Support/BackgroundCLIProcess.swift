import Foundation

/// A `gql-cli` child process left running while the test does other things (`subscribe`), with its output in
/// files that can be read at any time.
final class BackgroundCLIProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let process: Process
    private let scratch: TemporaryDirectory
    private let arguments: [String]

    /// Starts `gql-cli arguments…`.
    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = try CLIProcess.executable()
        process.arguments = arguments
        self.arguments = arguments
        scratch = try TemporaryDirectory()
        try process.run(writingOutputTo: scratch)
    }

    var isRunning: Bool { process.isRunning }

    /// What the process wrote on standard output so far.
    var stdout: String { read("stdout") }

    /// What the process wrote on standard error so far.
    var stderr: String { read("stderr") }

    /// The complete lines on standard output so far.
    var lines: [String] {
        let text = stdout
        guard let last = text.lastIndex(of: "\n") else { return [] }
        return text[..<last].split(separator: "\n").map(String.init)
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits (at most `timeout`) for the process to end and returns how it ended; kills it and throws when it
    /// did not end in time.
    func wait(timeout: Duration = .seconds(30)) async throws -> CLIProcess.Output {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw Failure(
                    description: "gql-cli \(arguments) did not end within \(timeout); stderr: \(stderr)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return CLIProcess.Output(
            status: process.terminationStatus, exited: process.terminationReason == .exit, stdout: stdout,
            stderr: stderr)
    }

    private func read(_ name: String) -> String {
        String(decoding: (try? Data(contentsOf: scratch.url.appendingPathComponent(name))) ?? Data(), as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
