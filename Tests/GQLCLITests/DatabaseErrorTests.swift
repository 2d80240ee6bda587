import Foundation
import GQLStore
import Testing

/// Failures end with a message on standard error and a non-zero exit, never a crash or a new file.
@Suite(.timeLimit(.minutes(2)))
struct DatabaseErrorTests {
    static let subcommands: [[String]] = [
        ["tables"], ["schema"], ["query", "SELECT 1"], ["exec", "CREATE TABLE t(x)"], ["count", "Person"],
    ]

    @Test(arguments: subcommands)
    func missingFileIsAnErrorAndIsNotCreated(_ command: [String]) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nope.sqlite")
        var arguments = ["db", command[0], path]
        arguments.append(contentsOf: command.dropFirst())
        let message = try await CLIProcess.fail(arguments)
        #expect(message.contains("no database file at \(path)"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func directoryIsNotADatabase() async throws {
        let directory = try TemporaryDirectory()
        let message = try await CLIProcess.fail(["db", "tables", directory.url.path])
        #expect(message.contains("is a directory"))
    }

    @Test func fileThatIsNotSQLiteIsReported() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.txt")
        let text = String(repeating: "not a database at all\n", count: 100)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let message = try await CLIProcess.fail(["db", "tables", path])
        #expect(message.contains("not a database"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }

    @Test func badSQLNamesTheStatement() async throws {
        let sample = try SampleDatabase()
        let message = try await CLIProcess.fail(["db", "query", sample.path, "SELEC name FROM Person"])
        #expect(message.contains("the query failed"))
        #expect(message.contains("syntax error"))
        #expect(message.contains("SELEC name FROM Person"))
    }

    @Test func queryRefusesToWrite() async throws {
        let sample = try SampleDatabase()
        let message = try await CLIProcess.fail(["db", "query", sample.path, "DELETE FROM Person"])
        #expect(message.contains("readonly"))
        #expect(try Person.count(try sample.open()) == 3)
    }

    @Test func unknownTableIsReported() async throws {
        let sample = try SampleDatabase()
        let count = try await CLIProcess.fail(["db", "count", sample.path, "Nope"])
        #expect(count.contains("Nope"))
        let schema = try await CLIProcess.fail(["db", "schema", sample.path, "Nope"])
        #expect(schema.contains("no table or view named 'Nope'"))
    }

    @Test func failedExecLeavesTheFileAsItWas() async throws {
        let sample = try SampleDatabase()
        let message = try await CLIProcess.fail([
            "db", "exec", sample.path, "INSERT INTO Person (id, name) VALUES (1, 'Dup')",
        ])
        #expect(message.contains("UNIQUE constraint failed"))
        #expect(try Person.fetchOne(try sample.open(), key: 1)?.name == "Ada")
    }

    @Test func usageErrorsExitWithTheUsageCode() async throws {
        let sample = try SampleDatabase()
        let message = try await CLIProcess.fail(["db", "query", sample.path], status: 64)
        #expect(message.contains("Missing expected argument"))
    }
}
