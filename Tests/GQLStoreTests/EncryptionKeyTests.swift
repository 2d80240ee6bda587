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

    /// Nonces are a per-connection random prefix and a counter: a forked child copies both, so it must draw its own
    /// before it encrypts, or its first page would reuse the nonce of the parent's next one under the same key.
    @Test func aForkedChildDrawsNoncesOfItsOwn() throws {
        let nonces = try #require(CipherForkProbe.nonces(), "the forked child did not answer")
        #expect(nonces.parent != nonces.child)
        #expect(nonces.parent.prefix(4) != nonces.child.prefix(4), "the child kept the parent's nonce prefix")
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
        for round in 0..<3 {
            let path = directory.path("race-\(round).sqlite")
            try Self.openAtOnce(path, path, round: round)
        }
    }

    /// The salt is the file's, not the spelling's: a symlinked folder and the folder itself, or `a/./b` and `a/b`,
    /// name one file and share one salt.
    @Test func spellingsOfOneMissingFileShareItsSalt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-race")
        defer { directory.cleanup() }
        let real = directory.path("real")
        let link = directory.path("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        for round in 0..<2 {
            let name = "race-\(round).sqlite"
            try Self.openAtOnce("\(real)/\(name)", "\(link)/\(name)", round: round)
        }
    }

    /// A new file whose folder does not exist yet, named through a symlinked folder: the first opening creates the
    /// folder, after which the path resolves through the link; the second opening must still find the first one's
    /// salt (two salts made one of them fail with `.wrongKey`).
    @Test func twoOpeningsOfANewFileInAMissingFolderShareItsSalt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt-folder")
        defer { directory.cleanup() }
        let real = directory.path("real")
        let link = directory.path("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let path = "\(link)/new/deeper/db.sqlite"
        let key = GQLDatabase.Key.passphrase("correct horse battery staple")
        let first = try GQLDatabase(path: path, key: key)
        let second = try GQLDatabase(path: path, key: key)
        try makeUser(1, "writer 1").insert(second)
        try makeUser(2, "writer 2").insert(first)
        try first.close()
        try second.close()
        let db = try GQLDatabase(path: "\(real)/new/deeper/db.sqlite", key: key)
        #expect(try User.fetchAll(db, order: "userId").map(\.name) == ["writer 1", "writer 2"])
        try db.close()
    }

    /// Opens the missing file under `first` and `second` (two spellings, or the same) from two threads at once with
    /// one passphrase; each writes a row. Both must succeed and both rows be there.
    static func openAtOnce(
        _ first: String, _ second: String, round: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let key = GQLDatabase.Key.passphrase("correct horse battery staple")
        // Each opening stretches the passphrase (about 0.1 s), so both open the missing file before either writes
        // its first page — the case where two salts made one of them fail to read the other's page 1.
        let start = DispatchSemaphore(value: 0)
        let outcomes = GQLLocked<[Int: String]>([:])
        let group = DispatchGroup()
        for (id, path) in [(1, first), (2, second)] {
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
        #expect(group.wait(timeout: .now() + 30) == .success, sourceLocation: sourceLocation)
        #expect(
            outcomes.withLock { $0 } == [1: "ok", 2: "ok"], "round \(round)", sourceLocation: sourceLocation)
        let db = try GQLDatabase(path: first, key: key)
        #expect(
            try User.fetchAll(db, order: "userId").map(\.name) == ["writer 1", "writer 2"], "round \(round)",
            sourceLocation: sourceLocation)
        try db.close()
    }
}
