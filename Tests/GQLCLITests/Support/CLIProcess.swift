import Foundation
import GQLTestSupport
import Testing

/// Runs the built `gql-cli` as a child process, the way a person or a script would.
enum CLIProcess {
    /// What one run printed and how it ended.
    struct Output: Sendable {
        var status: Int32
        /// Whether the process exited (rather than dying of a signal: a crash).
        var exited: Bool
        var stdout: String
        var stderr: String
    }

    struct NotFound: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "gql-cli was not built; looked in:\n" + searched.map { "  " + $0 }.joined(separator: "\n")
                + "\nBuild it (swift build) or set GQL_CLI_PATH."
        }
    }

    /// The executable: `GQL_CLI_PATH`, else next to the test bundle (the build products directory `swift test`
    /// built it into), else the newest `.build*/{debug,release}/gql-cli` of the package this file is in.
    static func executable() throws -> URL {
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment["GQL_CLI_PATH"], !path.isEmpty {
            candidates.append(URL(fileURLWithPath: path))
        }
        // Linux: .build/debug/<Package>PackageTests.xctest is itself the test executable. macOS: the test binary
        // sits in .build/debug/<Package>PackageTests.xctest/Contents/MacOS/. Either way an ancestor holds gql-cli.
        var starts = [URL(fileURLWithPath: CommandLine.arguments[0])]
        if let main = Bundle.main.executableURL { starts.append(main) }
        starts.append(contentsOf: Bundle.allBundles.map(\.bundleURL))
        for start in starts {
            var directory = start.resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent("gql-cli"))
                directory.deleteLastPathComponent()
            }
        }
        let found = candidates.first { fileManager.isExecutableFile(atPath: $0.path) }
        if let found { return found }

        // Package root: this file is <root>/Tests/GQLCLITests/Support/CLIProcess.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let builds = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? []).filter { $0.hasPrefix(".build") }
        var built: [(URL, Date)] = []
        for build in builds {
            for configuration in ["debug", "release"] {
                let url = root.appendingPathComponent(build).appendingPathComponent(configuration)
                    .appendingPathComponent("gql-cli")
                candidates.append(url)
                guard fileManager.isExecutableFile(atPath: url.path) else { continue }
                let date = (try? fileManager.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? nil
                built.append((url, date ?? .distantPast))
            }
        }
        if let newest = built.max(by: { $0.1 < $1.1 }) { return newest.0 }
        throw NotFound(searched: candidates.map(\.path))
    }

    /// Runs `gql-cli arguments…` to the end, with this process's environment plus `environment`. Output goes
    /// through files, so a chatty child never blocks on a full pipe.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        let scratch = try TemporaryDirectory()
        let process = try ChildProcess(
            try executable().path, arguments, environment: environment, stdout: .file(scratch.path("stdout")),
            stderr: .file(scratch.path("stderr")))
        return Output(await process.wait(), stdout: scratch.read("stdout"), stderr: scratch.read("stderr"))
    }

    /// Runs `gql-cli arguments…` and expects it to succeed with nothing on standard error.
    static func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> String
    {
        let output = try await run(arguments)
        #expect(
            output.exited && output.status == 0, "gql-cli \(arguments) failed: \(output.stderr)",
            sourceLocation: sourceLocation)
        #expect(output.stderr.isEmpty, "unexpected standard error: \(output.stderr)", sourceLocation: sourceLocation)
        return output.stdout
    }

    /// Runs `gql-cli arguments…` and expects a clean failure: exit code 1 (not a crash), a message on standard
    /// error, nothing on standard output. Returns the message.
    static func fail(_ arguments: [String], status: Int32 = 1, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> String
    {
        let output = try await run(arguments)
        #expect(output.exited, "gql-cli \(arguments) crashed (signal \(output.status))", sourceLocation: sourceLocation)
        #expect(output.status == status, "gql-cli \(arguments) exited \(output.status)", sourceLocation: sourceLocation)
        #expect(output.stdout.isEmpty, "unexpected standard output: \(output.stdout)", sourceLocation: sourceLocation)
        #expect(!output.stderr.isEmpty, "no message on standard error", sourceLocation: sourceLocation)
        return output.stderr
    }
}

extension CLIProcess.Output {
    init(_ termination: ChildProcess.Termination, stdout: String, stderr: String) {
        switch termination {
        case .exited(let status): self.init(status: status, exited: true, stdout: stdout, stderr: stderr)
        case .signalled(let signal): self.init(status: signal, exited: false, stdout: stdout, stderr: stderr)
        }
    }
}

extension TemporaryDirectory {
    /// The text of the file `name` in this directory ("" when it cannot be read).
    func read(_ name: String) -> String {
        String(decoding: (try? Data(contentsOf: url.appendingPathComponent(name))) ?? Data(), as: UTF8.self)
    }
}
