import Dispatch
import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// The keys behind an encrypted database: each file's pages are encrypted under a key of its own (HKDF of the key
/// and the file id), as an independent reader of the documented format confirms; and two databases opening the
/// same missing file at once agree on its salt.
@Suite(.timeLimit(.minutes(1))) struct EncryptionKeyTests {
    @Test func eachFileEncryptsItsPagesUnderAKeyOfItsOwn() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-keys")
        defer { directory.cleanup() }
        let raw = Data((0..<32).map { UInt8($0 &* 3 &+ 17) })
        let marker = "page-key-marker-\(UInt32.random(in: 0...UInt32.max))"
        var pages: [Data] = []
        for name in ["one.sqlite", "two.sqlite"] {
            let path = directory.path(name)
            try Self.writeOneUser(marker, to: path, key: .raw(raw))
            // Closed, so every page is in the file. Python's `cryptography`, following the Encryption article:
            // page 2 (the table's leaf) decrypts under HKDF-SHA256(key, file id, "gqlcrypt page key"), and not under
            // the key itself.
            let said = String(
                decoding: try await PythonPeer.run(
                    "gqlcrypt_page.py", [path, "2"], input: Data(raw.map { String(format: "%02x", $0) }.joined().utf8)),
                as: UTF8.self)
            let lines = said.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(said)")
            #expect(lines.first?.hasPrefix("page key: ok ") == true, "\(said)")
            #expect(lines.last == "raw key: refused", "\(said)")
            let plaintext = String(lines.first?.dropFirst("page key: ok ".count) ?? "")
            let markerHex = Data(marker.utf8).map { String(format: "%02x", $0) }.joined()
            #expect(plaintext.contains(markerHex), "the decrypted page holds the inserted row")
            pages.append(try #require(FileManager.default.contents(atPath: path)))
        }
        // Same key, two files: different file ids, so different page keys.
        #expect(pages[0].prefix(16) != pages[1].prefix(16))
    }

    /// A new encrypted file at `path` with one user named `name`, closed.
    static func writeOneUser(_ name: String, to path: String, key: GQLDatabase.Key) throws {
        let db = try GQLDatabase(path: path, key: key)
        try db.write { tx in try makeUser(1, name).insert(tx) }
        try db.close()
    }

    @Test func twoDatabasesOpeningTheSameMissingFileAtOnceAgreeOnItsSalt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-race")
        defer { directory.cleanup() }
        let key = GQLDatabase.Key.passphrase("correct horse battery staple")
        // A few rounds: each opening stretches the passphrase (about 0.1 s), so both open the missing file before
        // either writes its first page — the case where two salts made one of them fail to read the other's page 1.
        for round in 0..<3 {
            let path = directory.path("race-\(round).sqlite")
            let start = DispatchSemaphore(value: 0)
            let outcomes = GQLLocked<[Int: String]>([:])
            let group = DispatchGroup()
            for id in 1...2 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    start.wait()
                    do {
                        let db = try GQLDatabase(path: path, key: key)
                        try makeUser(id, "writer \(id)").insert(db)
                        try db.close()
                        outcomes.withLock { $0[id] = "ok" }
                    } catch {
                        outcomes.withLock { $0[id] = "\(error)" }
                    }
                }
            }
            start.signal()
            start.signal()
            // Generous: two key stretches and two small writes take well under a second.
            #expect(group.wait(timeout: .now() + 30) == .success)
            #expect(outcomes.withLock { $0 } == [1: "ok", 2: "ok"], "round \(round)")
            let db = try GQLDatabase(path: path, key: key)
            #expect(try User.fetchAll(db, order: "userId").map(\.name) == ["writer 1", "writer 2"], "round \(round)")
            try db.close()
        }
    }
}
