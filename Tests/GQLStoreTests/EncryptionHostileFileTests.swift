import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// Files planted or altered beside an encrypted database by someone who can write its folder but has no key, and the
/// WAL paths that only large transactions take.
@Suite(.timeLimit(.minutes(2))) struct EncryptionHostileFileTests {
    static let key = GQLDatabase.Key.raw(Data((0..<32).map { UInt8(($0 * 7 + 3) & 0xff) }))

    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    static func put32(_ value: UInt32, into data: inout Data, at offset: Int) {
        for i in 0..<4 { data[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
    }

    /// A rollback journal as SQLite writes one (header of one 512-byte sector, then one record), holding a chosen
    /// plaintext page `page` with the keyless record checksum SQLite checks: what someone without the key can write.
    static func plantedJournal(page: UInt32, image: Data, pageSize: Int, databasePages: Int) -> Data {
        var journal = Data(count: 512 + 4 + pageSize + 4)
        journal.replaceSubrange(0..<8, with: [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7])
        put32(1, into: &journal, at: 8)  // one record
        put32(0, into: &journal, at: 12)  // checksum seed
        put32(UInt32(databasePages), into: &journal, at: 16)
        put32(512, into: &journal, at: 20)  // sector size
        put32(UInt32(pageSize), into: &journal, at: 24)
        put32(page, into: &journal, at: 512)
        journal.replaceSubrange(516..<(516 + pageSize), with: image)
        var checksum: UInt32 = 0
        var i = pageSize - 200
        while i > 0 {
            checksum &+= UInt32(image[image.startIndex + i])
            i -= 200
        }
        put32(checksum, into: &journal, at: 516 + pageSize)
        return journal
    }

    @Test func aPlantedRollbackJournalWritesNoPageIntoTheDatabase() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-hostile")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.key)
        try db.write { tx in
            for id in 1...20 { try makeUser(id, "user \(id)", age: 20 + id).insert(tx) }
        }
        try db.close()  // checkpointed: every page is in the file, and there is no WAL
        let original = Self.bytes(path)
        let sizeField = Int(original[16]) << 8 | Int(original[17])
        let pageSize = sizeField == 1 ? 65536 : sizeField
        let reserve = Int(original[20])
        let pages = original.count / pageSize
        try #require(pages >= 2 && reserve > 0)
        // Page 2 replaced by an empty table leaf in clear; reserved bytes (and so the key check) zero.
        var image = Data(count: pageSize)
        image[0] = 0x0d
        image[5] = UInt8((pageSize - reserve) >> 8)
        image[6] = UInt8((pageSize - reserve) & 0xff)
        try Self.plantedJournal(page: 2, image: image, pageSize: pageSize, databasePages: pages)
            .write(to: URL(fileURLWithPath: path + "-journal"))
        // Opening plays a hot journal back. Either the open refuses the file, or page 2 is as it was.
        let reopened: GQLDatabase
        do {
            reopened = try GQLDatabase(path: path, key: Self.key)
        } catch let error as GQLError {
            #expect(error.code == .corrupt, "\(error)")
            return
        }
        let names = try User.fetchAll(reopened, order: "userId").map(\.name)
        let after = Self.bytes(path)
        #expect(after.count >= 2 * pageSize)
        let unchanged = after.prefix(2 * pageSize).suffix(pageSize) == original.prefix(2 * pageSize).suffix(pageSize)
        #expect(unchanged, "the planted journal rewrote page 2")
        #expect(names == (1...20).map { "user \($0)" })
        try reopened.close()
    }

    @Test func aWALPlantedBesideAFileWithoutPageOneShowsNoRows() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-hostile")
        defer { directory.cleanup() }
        // Someone else's rows in clear: a plain database's WAL, copied while its connection is open.
        let plainPath = directory.path("plain.sqlite")
        let plain = try GQLDatabase(path: plainPath)
        try plain.write { tx in
            for id in 1...5 { try makeUser(id, "planted \(id)").insert(tx) }
        }
        let wal = Self.bytes(plainPath + "-wal")
        try plain.close()
        try #require(wal.count > 32)
        // Planted beside a file too short to have a header (SQLite would delete the WAL of an empty one).
        let path = directory.path("secret.sqlite")
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: path))
        try wal.write(to: URL(fileURLWithPath: path + "-wal"))
        let db: GQLDatabase
        do {
            db = try GQLDatabase(path: path, key: Self.key)
        } catch is GQLError {
            return  // refused: nothing of the planted WAL was read
        }
        let names = (try? User.fetchAll(db, order: "userId").map(\.name)) ?? []
        #expect(names.isEmpty, "rows from the planted WAL: \(names)")
        try? db.close()
    }

    @Test func aTransactionLargerThanThePageCacheCommitsThroughTheEncryptedWAL() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-spill")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.key)
        // A first commit, so the big transaction's frames do not start at frame 1 of the WAL.
        try db.execute("CREATE TABLE spill(id INTEGER PRIMARY KEY, body BLOB, note TEXT)")
        try db.execute("PRAGMA cache_size = 50")
        // About 3 MB in one transaction: it spills pages to the WAL before the commit, then changes pages it has
        // already spilled (the early rows), so SQLite rewrites those frames and, at commit, their checksums.
        try db.write { tx in
            try tx.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
                    + "INSERT INTO spill SELECT i, zeroblob(1000), 'first' FROM n")
            try tx.execute("UPDATE spill SET note = 'again' WHERE id <= 300")
        }
        let counts = try db.fetchAll(
            sql: "SELECT count(*) AS total, sum(note = 'again') AS again FROM spill")
        #expect(counts.first?["total"] == .int(3000))
        #expect(counts.first?["again"] == .int(300))
        try db.close()
        let reopened = try GQLDatabase(path: path, key: Self.key)
        #expect(try reopened.fetchAll(sql: "PRAGMA integrity_check").first?["integrity_check"]?.stringValue == "ok")
        try reopened.close()
    }
}
