import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// An encrypted database: the file reveals nothing, refusals are exact, and everything a plain database does works.
@Suite(.timeLimit(.minutes(2))) struct EncryptionTests {
    static let keyA = GQLDatabase.Key.raw(Data((0..<32).map { UInt8($0) }))
    static let keyB = GQLDatabase.Key.raw(Data((0..<32).map { UInt8(255 - $0) }))

    /// Markers no SQLite structure contains, so finding one in raw bytes means a value leaked.
    static func markers(_ count: Int, seedName: String) -> [String] {
        var random = SplitMix64(seed: TestSeed.make(seedName))
        return (0..<count).map { _ in "secret-\(String(random.next(), radix: 36))-marker" }
    }

    /// Expects `body` to throw a ``GQLError`` with `code`.
    static func expectCode(
        _ code: GQLError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any
    ) {
        do {
            _ = try body()
            Issue.record("expected GQLError .\(code); nothing was thrown", sourceLocation: sourceLocation)
        } catch {
            #expect((error as? GQLError)?.code == code, "\(error)", sourceLocation: sourceLocation)
        }
    }

    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    /// The markers found in the raw bytes of `path`.
    static func leaked(_ markers: [String], in path: String) -> [String] {
        let data = bytes(path)
        return markers.filter { data.range(of: Data($0.utf8)) != nil }
    }

    static func insertMarkers(_ db: GQLDatabase, _ markers: [String]) throws {
        try db.write { tx in
            for (i, marker) in markers.enumerated() { try makeUser(i + 1, marker, age: 20 + i % 50).insert(tx) }
        }
    }

    // MARK: The file reveals nothing

    @Test func noInsertedValueAppearsInTheDatabaseFileOrItsWAL() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let markers = Self.markers(200, seedName: "encryption markers")
        for encrypted in [false, true] {
            let path = directory.path(encrypted ? "secret.sqlite" : "plain.sqlite")
            let db = encrypted ? try GQLDatabase(path: path, key: Self.keyA) : try GQLDatabase(path: path)
            try Self.insertMarkers(db, markers)
            #expect(try User.count(db) == markers.count)
            // The rows are in the WAL now (the connection is open); a checkpoint moves them into the file as well.
            let walBefore = Self.leaked(markers, in: path + "-wal")
            try db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            let file = Self.leaked(markers, in: path)
            #expect(Self.bytes(path + "-wal").count > 0)
            if encrypted {
                #expect(walBefore.isEmpty, "values in the encrypted WAL: \(walBefore.prefix(3))")
                #expect(file.isEmpty, "values in the encrypted file: \(file.prefix(3))")
            } else {
                // The control: the same search finds them in a plain file, so the search can fail.
                #expect(walBefore.count == markers.count && file.count == markers.count)
            }
            try db.close()
        }
    }

    @Test func noInsertedValueAppearsInTheRollbackJournal() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let markers = Self.markers(200, seedName: "journal markers")
        var configuration = GQLDatabase.Configuration()
        configuration.rollbackJournal = true
        for encrypted in [false, true] {
            let path = directory.path(encrypted ? "secret.sqlite" : "plain.sqlite")
            let db =
                encrypted
                ? try GQLDatabase(path: path, key: Self.keyA, configuration: configuration)
                : try GQLDatabase(path: path, configuration: configuration)
            try Self.insertMarkers(db, markers)
            // Changing every row journals every page that holds the old values; read the journal mid-transaction.
            let (journalSize, found) = try db.write { tx in
                try User.updateAll(tx, ["name": "overwritten"])
                return (Self.bytes(path + "-journal").count, Self.leaked(markers, in: path + "-journal"))
            }
            #expect(journalSize > 0, "no rollback journal was written")
            if encrypted {
                #expect(found.isEmpty, "values in the encrypted journal: \(found.prefix(3))")
            } else {
                #expect(found.count == markers.count)
            }
            #expect(try User.count(db, "name = ?", ["overwritten"]) == markers.count)
            try db.close()
        }
    }

    @Test func pythonsSQLiteCannotReadTheFile() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.keyA)
        try Self.insertMarkers(db, ["hello"])
        try db.close()
        let script = """
            import sqlite3, sys
            try:
                print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM sqlite_master").fetchone())
            except sqlite3.DatabaseError as error:
                print("refused:", error)
            """
        let output = directory.path("python.out")
        let python = try ChildProcess("/usr/bin/env", ["python3", "-c", script, path], stdout: .file(output))
        #expect(python.waitBlocking() == .exited(0))
        let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(said.contains("refused: file is not a database"), "python said: \(said)")
    }

    /// The `sqlite3` command-line tool refuses the file, and what it prints holds none of the values inserted. CI
    /// installs Debian's `sqlite3`; where the tool is absent the test is skipped and says so.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"),
            "needs the sqlite3 command-line tool at /usr/bin/sqlite3"))
    func theSQLiteCommandLineToolCannotOpenTheFile() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.keyA)
        try Self.insertMarkers(db, ["hello-from-the-cli-test"])
        try db.close()
        let (out, err) = (directory.path("sqlite3.out"), directory.path("sqlite3.err"))
        let child = try ChildProcess(
            "/usr/bin/sqlite3", ["-batch", path, "SELECT count(*) FROM sqlite_master;"],
            stdout: .file(out), stderr: .file(err))
        let ended = child.waitBlocking()
        let said = [out, err].map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined()
        #expect(ended != .exited(0), "sqlite3 opened the file: \(said)")
        #expect(said.contains("file is not a database"), "sqlite3 said: \(said)")
        #expect(!said.contains("hello-from-the-cli-test"))
    }

    // MARK: Refusals

    @Test func aWrongKeyIsRefusedAtOpenAndTheFileIsUntouched() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: .passphrase("correct horse"))
        try Self.insertMarkers(db, ["one", "two"])
        try db.close()
        let before = Self.bytes(path)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        for key in [Self.keyB, .passphrase("wrong horse")] {
            #expect {
                try GQLDatabase(path: path, key: key)
            } throws: { error in
                guard let error = error as? GQLError, error.code == .wrongKey else { return false }
                return !error.description.contains("horse")
            }
        }
        #expect(Self.bytes(path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == files)
        let reopened = try GQLDatabase(path: path, key: .passphrase("correct horse"))
        #expect(try User.fetchAll(reopened, order: "userId").map(\.name) == ["one", "two"])
    }

    @Test func aTamperedPageIsCorruptAndNamed() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.keyA)
        try Self.insertMarkers(db, Self.markers(400, seedName: "tamper markers"))
        try db.close()  // the last connection checkpoints: every page is in the file
        var data = Self.bytes(path)
        let pageSize = 4096
        #expect(data.count >= 4 * pageSize)
        // One bit of page 3's ciphertext.
        data[2 * pageSize + 100] ^= 0x01
        try data.write(to: URL(fileURLWithPath: path))
        let reopened = try GQLDatabase(path: path, key: Self.keyA)
        #expect {
            try User.fetchAll(reopened)
        } throws: { error in
            guard let error = error as? GQLError else { return false }
            return error.code == .corrupt && error.message.contains("page 3 of the encrypted database file")
        }
        try reopened.close()
        // Page 1 altered: refused at open.
        data[2 * pageSize + 100] ^= 0x01
        data[200] ^= 0x80
        try data.write(to: URL(fileURLWithPath: path))
        #expect {
            try GQLDatabase(path: path, key: Self.keyA)
        } throws: { error in
            (error as? GQLError)?.code == .corrupt && (error as? GQLError)?.message.contains("page 1") == true
        }
    }

    @Test func plainAndEncryptedFilesAreToldApart() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let plain = directory.path("plain.sqlite")
        let secret = directory.path("secret.sqlite")
        try Self.insertMarkers(try GQLDatabase(path: plain), ["a"])
        try Self.insertMarkers(try GQLDatabase(path: secret, key: Self.keyA), ["b"])
        Self.expectCode(.notEncrypted) { try GQLDatabase(path: plain, key: Self.keyA) }
        Self.expectCode(.keyRequired) { try GQLDatabase(path: secret) }
        Self.expectCode(.invalidArgument) { try GQLDatabase(path: ":memory:", key: Self.keyA) }
        Self.expectCode(.invalidArgument) {
            try GQLDatabase(path: directory.path("short.sqlite"), key: .raw(Data(count: 16)))
        }
    }

    /// EncryptionBench compares plain with encrypted: both sides must be able to keep the same page cache.
    @Test func pageCacheIsEncryptedsDefaultAndConfigurableForPlainFiles() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        func cacheSize(_ db: GQLDatabase) throws -> Int64? {
            try db.fetchAll(sql: "PRAGMA cache_size").first?["cache_size"]?.intValue
        }
        let plain = try GQLDatabase(path: directory.path("plain.sqlite"))
        #expect(try cacheSize(plain) == -2_000)
        let secret = try GQLDatabase(path: directory.path("secret.sqlite"), key: Self.keyA)
        #expect(try cacheSize(secret) == -8_000)
        var configuration = GQLDatabase.Configuration()
        configuration.pageCacheKiB = 8_000
        let larger = try GQLDatabase(path: directory.path("plain8.sqlite"), configuration: configuration)
        #expect(try cacheSize(larger) == -8_000)
        configuration.pageCacheKiB = 2_000
        let smaller = try GQLDatabase(
            path: directory.path("secret2.sqlite"), key: Self.keyA, configuration: configuration)
        #expect(try cacheSize(smaller) == -2_000)
    }

    @Test func keysNeverShowInDescriptions() {
        let key = GQLDatabase.Key.passphrase("correct horse battery")
        let raw = GQLDatabase.Key.raw(Data("0123456789abcdef0123456789abcdef".utf8))
        for text in ["\(key)", String(describing: raw), String(reflecting: key), "\([key, raw])"] {
            #expect(!text.contains("horse") && !text.contains("0123"), "\(text)")
        }
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("horse"))
    }

    // MARK: Rekey and migration

    @Test func rekeyRewritesEveryPageAndOnlyTheNewKeyOpens() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.keyA)
        let heard = TestLocked<[GQLObserverType]>([])
        _ = try User.createObserver(db, [.insert]) { type, _ in heard.withLock { $0.append(type) } }
        try Self.insertMarkers(db, Self.markers(300, seedName: "rekey markers"))
        try await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let before = Self.bytes(path)
        try db.rekey(Self.keyB)
        // The same database object goes on: reads, writes, observers.
        #expect(try User.count(db) == 300)
        try makeUser(1_000, "after").insert(db)
        await observersSettled(db)
        #expect(heard.value.count == 301)
        try await db.close()
        // No page kept its old bytes: every page was encrypted again under the new key and file id.
        let after = Self.bytes(path)
        let pageSize = 4096
        let pages = min(before.count, after.count) / pageSize
        #expect(pages >= 3)
        for page in 0..<pages {
            let range = page * pageSize..<(page + 1) * pageSize
            #expect(before[range] != after[range], "page \(page + 1) was not rewritten")
        }
        Self.expectCode(.wrongKey) { try GQLDatabase(path: path, key: Self.keyA) }
        let reopened = try GQLDatabase(path: path, key: Self.keyB)
        #expect(try User.count(reopened) == 301)
        #expect(
            try reopened.fetchAll(sql: "PRAGMA integrity_check").first?["integrity_check"]?.stringValue == "ok")
        #expect(!FileManager.default.fileExists(atPath: path + "-rekey"))
    }

    @Test func encryptAndDecryptMigrateAFile() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        let plain = directory.path("plain.sqlite")
        let secret = directory.path("secret.sqlite")
        let back = directory.path("back.sqlite")
        let markers = Self.markers(100, seedName: "migration markers")
        let source = try GQLDatabase(path: plain)
        try Self.insertMarkers(source, markers)
        try GQLDatabase.encrypt(path: plain, to: secret, key: .passphrase("migrate"))
        #expect(Self.leaked(markers, in: secret).isEmpty)
        Self.expectCode(.invalidArgument) {
            try GQLDatabase.encrypt(path: plain, to: secret, key: Self.keyA)
        }
        let encrypted = try GQLDatabase(path: secret, key: .passphrase("migrate"))
        #expect(try User.fetchAll(encrypted, order: "userId").map(\.name) == markers)
        try makeUser(500, "added encrypted").insert(encrypted)
        try encrypted.close()

        Self.expectCode(.wrongKey) {
            try GQLDatabase.decrypt(path: secret, to: back, key: .passphrase("nope"))
        }
        try GQLDatabase.decrypt(path: secret, to: back, key: .passphrase("migrate"))
        let decrypted = try GQLDatabase(path: back)
        #expect(try User.count(decrypted) == markers.count + 1)
        #expect(Self.leaked(markers, in: back).count == markers.count)
    }

    // MARK: Everything else works the same

    @Test func readersObserversAndMigrationsWorkOnAnEncryptedFile() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcrypt")
        defer { directory.cleanup() }
        var configuration = GQLDatabase.Configuration()
        configuration.maximumReaders = 3
        let db = try GQLDatabase(path: directory.path("secret.sqlite"), key: Self.keyA, configuration: configuration)
        var migrator = GQLMigrator()
        migrator.step(1, "notes") { tx in try tx.execute("CREATE TABLE Note (id INTEGER PRIMARY KEY, body TEXT)") }
        _ = try migrator.migrate(db)
        let heard = TestLocked(0)
        _ = try User.createObserver(db, [.insert], "OBJ.age >= 40") { _, _ in heard.withLock { $0 += 1 } }
        // Writers and readers at once: every read sees a whole batch, never a page it cannot decrypt.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for batch in 0..<20 {
                    try db.write { tx in
                        for i in 0..<10 { try makeUser(batch * 10 + i + 1, "u", age: 35 + i).insert(tx) }
                    }
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    for _ in 0..<40 {
                        let count = try User.count(db)
                        #expect(count % 10 == 0)
                    }
                }
            }
            try await group.waitForAll()
        }
        await observersSettled(db)
        #expect(try User.count(db) == 200)
        #expect(heard.value == 20 * 5)
        try await db.execute("INSERT INTO Note (body) VALUES ('x')")
        #expect(try db.fetchAll(sql: "SELECT COUNT(*) AS n FROM Note").first?["n"]?.intValue == 1)
        // A sort and a VACUUM need temporary storage, which stays in memory.
        #expect(try User.fetchAll(db, order: "name DESC, age").count == 200)
        try await db.execute("VACUUM")
        #expect(try User.count(db) == 200)
    }
}
