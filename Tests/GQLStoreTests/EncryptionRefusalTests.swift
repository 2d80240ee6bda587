import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// Refusals after the open: a page under another key is `.wrongKey` when the whole file is (it was replaced or
/// rekeyed under an open database) and `.corrupt` when only that page is (it came from another file); a file from a
/// development build before the per-file page key says so instead of calling itself damaged.
@Suite(.timeLimit(.minutes(1))) struct EncryptionRefusalTests {
    static let rawA = Data((0..<32).map { UInt8($0 &+ 40) })
    static let keyA = GQLDatabase.Key.raw(rawA)
    static let keyB = GQLDatabase.Key.raw(Data((0..<32).map { UInt8(200 &- $0) }))
    static let pageSize = 4096

    static func write(_ names: [String], to path: String, key: GQLDatabase.Key) throws {
        let db = try GQLDatabase(path: path, key: key)
        try db.write { tx in
            for (i, name) in names.enumerated() { try makeUser(i + 1, name).insert(tx) }
        }
        try db.close()  // the last connection checkpoints: every page is in the file, no WAL
    }

    static func names(_ count: Int, _ prefix: String) -> [String] {
        (0..<count).map { "\(prefix)-\($0)-\(String(repeating: "x", count: 40))" }
    }

    @Test func aFileReplacedUnderAnOpenDatabaseIsAWrongKeyNotCorrupt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-refusal")
        defer { directory.cleanup() }
        let path = directory.path("app.sqlite")
        let db = try GQLDatabase(path: path, key: Self.keyA)
        try makeUser(1, "a").insert(db)
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // Another process rekeys the file, or restores a backup written under another key (both rename a whole
        // file over it). The next read opens a reader on the new file, whose page 1 is not under key A.
        let other = directory.path("other.sqlite")
        try Self.write(["b"], to: other, key: Self.keyB)
        #expect(rename(other, path) == 0)
        #expect {
            try User.count(db)
        } throws: { error in
            guard let error = error as? GQLError else { return false }
            return error.code == .wrongKey && error.message.contains("page 1")
        }
    }

    @Test func aPageFromAnotherFileUnderTheSameKeyIsCorrupt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-refusal")
        defer { directory.cleanup() }
        let path = directory.path("app.sqlite")
        let donor = directory.path("donor.sqlite")
        try Self.write(Self.names(300, "app"), to: path, key: Self.keyA)
        try Self.write(Self.names(300, "donor"), to: donor, key: Self.keyA)
        // Page 3 of another file under the same key: its key check is for the other file id, page 1's is right.
        var data = try #require(FileManager.default.contents(atPath: path))
        let transplant = try #require(FileManager.default.contents(atPath: donor))
        let range = 2 * Self.pageSize..<3 * Self.pageSize
        #expect(data.count >= range.upperBound && transplant.count >= range.upperBound)
        data.replaceSubrange(range, with: transplant[range])
        try data.write(to: URL(fileURLWithPath: path))
        let db = try GQLDatabase(path: path, key: Self.keyA)
        #expect {
            try User.fetchAll(db)
        } throws: { error in
            guard let error = error as? GQLError else { return false }
            return error.code == .corrupt && error.message.contains("page 3 of the encrypted database file")
        }
    }

    @Test func aFileInTheEarlierUnreleasedFormatSaysSo() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-refusal")
        defer { directory.cleanup() }
        let path = directory.path("early.sqlite")
        try Self.write(Self.names(20, "early"), to: path, key: Self.keyA)
        // Every page rewritten as the development builds before the per-file page key wrote it.
        let said = try await PythonPeer.run(
            "gqlcrypt_page.py", [path, "earlier"],
            input: Data(Self.rawA.map { String(format: "%02x", $0) }.joined().utf8))
        #expect(String(decoding: said, as: UTF8.self).hasPrefix("rewrote "))
        let before = try #require(FileManager.default.contents(atPath: path))
        #expect {
            try GQLDatabase(path: path, key: Self.keyA)
        } throws: { error in
            guard let error = error as? GQLError else { return false }
            return error.code == .unsupportedFormat && error.message.contains("earlier")
        }
        // Another key is still a wrong key, and the file is unchanged.
        #expect {
            try GQLDatabase(path: path, key: Self.keyB)
        } throws: { error in
            (error as? GQLError)?.code == .wrongKey
        }
        #expect(FileManager.default.contents(atPath: path) == before)
    }
}
