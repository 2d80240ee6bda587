import Foundation
import GQLStore
import GQLTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The hidden `db write-loop` the crash-safety test drives.
@Suite(.timeLimit(.minutes(2)))
struct WriteLoopTests {
    struct CrashRow: GQLObject {
        var id = 0
        var batch = 0
        var payload = ""
        static func primaryKey() -> String { "id" }
    }

    @Test func isHiddenFromHelp() async throws {
        let help = try await CLIProcess.succeed(["db", "--help"])
        #expect(help.contains("tables"))
        #expect(!help.contains("write-loop"))
    }

    @Test func everyPrintedBatchIsCommittedWholeAfterAKill() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("crash.sqlite")
        let process = try ChildProcess(
            try CLIProcess.executable().path, ["db", "write-loop", path, "--batch", "7"], stdout: .pipe)

        // Read until five committed batches were announced, then kill the writer mid-stream.
        var text = ""
        while text.split(separator: "\n").count < 5, let chunk = process.read() {
            text += String(decoding: chunk, as: UTF8.self)
        }
        process.kill(SIGKILL)
        while let chunk = process.read() { text += String(decoding: chunk, as: UTF8.self) }
        _ = await process.wait()
        let announced = text.split(separator: "\n").compactMap { Int($0) }
        #expect(announced.count >= 5)
        #expect(announced == Array(1...announced.count))

        let db = try GQLDatabase(path: path)
        let rows = try CrashRow.fetchAll(db, order: "id")
        let lastBatch = try #require(announced.last)
        // Every announced batch is there, whole; at most one more committed after the last line was read.
        let perBatch = Dictionary(grouping: rows, by: \.batch).mapValues(\.count)
        let incomplete = (1...lastBatch).filter { perBatch[$0] != 7 }
        #expect(incomplete.isEmpty, "announced batches not whole in the file: \(incomplete.prefix(10))")
        let batches = Set(rows.map(\.batch))
        #expect(batches == Set(1...lastBatch) || batches == Set(1...(lastBatch + 1)))
        #expect(rows.map(\.id) == Array(1...rows.count))
        #expect(rows.count % 7 == 0)
        #expect(rows.first?.payload == "batch 1 row 1")
    }

    @Test func continuesFromTheLargestIdAndBatch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("loop.sqlite")
        #expect(try await CLIProcess.succeed(["db", "write-loop", path, "--batch", "3", "--limit", "2"]) == "1\n2\n")
        #expect(try await CLIProcess.succeed(["db", "write-loop", path, "--batch", "2", "--limit", "2"]) == "3\n4\n")
        let db = try GQLDatabase(path: path)
        let rows = try CrashRow.fetchAll(db, order: "id")
        #expect(rows.map(\.id) == Array(1...10))
        #expect(rows.map(\.batch) == [1, 1, 1, 2, 2, 2, 3, 3, 4, 4])
    }
}
