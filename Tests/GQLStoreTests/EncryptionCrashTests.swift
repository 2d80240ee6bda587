import Dispatch
import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGKILL during encrypted writes and during rekey: nothing acknowledged is lost, the file stays whole, and exactly one
/// key opens it.
@Suite(.timeLimit(.minutes(2))) struct EncryptionCrashTests {
    static let hexA = String(repeating: "5a", count: 32)
    static let hexB = String(repeating: "a5", count: 32)
    static func key(_ hex: String) -> GQLDatabase.Key {
        var bytes = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return .raw(bytes)
    }

    @Test func killedEncryptedWriterLosesNothingAndTheKeyStillOpens() async throws {
        let cli = try CrashSafetyTests.cliExecutable()
        let scratch = try TemporaryDirectory(prefix: "gqlcrypt-crash")
        defer { scratch.cleanup() }
        let path = scratch.path("crash.sqlite")
        var random = SplitMix64(seed: TestSeed.make("encrypted crash kills"))
        var reported: [Int] = []
        // 20 kills, each after 2 to 12 commits: the loop commits hundreds a second, so each lands at a different point.
        for run in 1...20 {
            let batches = 2 + Int(random.next() % 11)
            let result = try await onThread {
                try CrashSafetyTests.writeUntilKilled(
                    cli, path: path, batches: batches, scratch: scratch.url,
                    environment: ["GQL_DB_KEY": "raw:\(Self.hexA)"])
            }
            #expect(result.stderr.isEmpty, "run \(run) wrote to stderr: \(result.stderr)")
            try #require(result.printed.count >= batches, "run \(run) ended early; stderr: \(result.stderr)")
            #expect(result.terminatedBySIGKILL, "run \(run) ended before it was killed")
            reported += result.printed
            try CrashSafetyTests.checkFile(path: path, reported: reported, run: run, key: Self.key(Self.hexA))
        }
        // Still encrypted: no row text in the file or its WAL.
        for file in [path, path + "-wal"] {
            let data = FileManager.default.contents(atPath: file) ?? Data()
            #expect(data.range(of: Data("row 1".utf8)) == nil, "plaintext in \(file)")
        }
    }

    static func fill(_ path: String, key: GQLDatabase.Key) throws {
        let db = try GQLDatabase(path: path, key: key)
        try db.write { tx in
            for id in 1...3_000 { try makeUser(id, String(repeating: "n", count: 200), age: id % 90).insert(tx) }
        }
        try db.close()
    }

    /// Whether `key` opens the file, and then that every row is there and the file whole; `false` on `.wrongKey`.
    static func opensWhole(_ path: String, key: GQLDatabase.Key, run: Int) throws -> Bool {
        let db: GQLDatabase
        do {
            db = try GQLDatabase(path: path, key: key)
        } catch let error as GQLError where error.code == .wrongKey {
            return false
        }
        #expect(try User.count(db) == 3_000, "run \(run): rows lost")
        #expect(try db.fetchAll(sql: "PRAGMA integrity_check").first?["integrity_check"]?.stringValue == "ok")
        try db.close()
        return true
    }

    @Test func aKillDuringRekeyLeavesExactlyOneKeyThatOpens() async throws {
        let cli = try CrashSafetyTests.cliExecutable()
        let scratch = try TemporaryDirectory(prefix: "gqlcrypt-rekey")
        defer { scratch.cleanup() }
        let path = scratch.path("secret.sqlite")
        let keyFiles = [scratch.path("a.key"), scratch.path("b.key")]
        try Data("raw:\(Self.hexA)\n".utf8).write(to: URL(fileURLWithPath: keyFiles[0]))
        try Data("raw:\(Self.hexB)\n".utf8).write(to: URL(fileURLWithPath: keyFiles[1]))
        let keys = [Self.key(Self.hexA), Self.key(Self.hexB)]
        try Self.fill(path, key: keys[0])
        var random = SplitMix64(seed: TestSeed.make("rekey kills"))
        var current = 0
        var outcomes: [Bool] = []
        for run in 1...10 {
            // A kill at a random moment: before the copy, during it, at the rename or after; each must leave one key.
            let delay = Int(random.next() % 120)
            let process = try ChildProcess(
                cli.path,
                ["db", "rekey", path, "--key-file", keyFiles[current], "--new-key-file", keyFiles[1 - current]])
            let finished = await onThread { () -> Bool in
                usleep(UInt32(delay) * 1_000)
                let done = process.termination == .exited(0)
                process.kill(SIGKILL)
                _ = process.waitBlocking()
                return done
            }
            let previous = current
            var opened: [Int] = []
            for candidate in [current, 1 - current] where try Self.opensWhole(path, key: keys[candidate], run: run) {
                opened.append(candidate)
            }
            #expect(opened.count == 1, "run \(run) (kill after \(delay) ms): keys that open: \(opened)")
            if let winner = opened.first {
                outcomes.append(winner != current)
                current = winner
            }
            // A rekey that had exited by itself before the kill had committed: only the new key opens.
            if finished { #expect(opened == [1 - previous], "run \(run): the rekey finished, yet \(opened) open") }
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-rekey"))
        print("rekey kills: \(outcomes.filter { $0 }.count) of \(outcomes.count) runs had switched keys")
    }
}
