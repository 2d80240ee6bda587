import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// Opening a database reads its first bytes to tell plain, encrypted and new files apart. On POSIX, closing any
/// descriptor of a file drops every fcntl lock the process holds on it, SQLite's included, so that read must not
/// close a descriptor of its own while a connection of this process holds locks: another process would then write
/// under a transaction this one believes it holds. Each test holds a lock, opens the file again in this process,
/// and asks a separate process (Python) whether the lock is still there.
@Suite(.timeLimit(.minutes(1))) struct FileLockTests {
    static let key = GQLDatabase.Key.raw(Data((0..<32).map { UInt8($0 &* 7 &+ 1) }))

    /// What another process sees of the file at `path`: `begin` tries `BEGIN IMMEDIATE` with Python's sqlite3 (no
    /// busy wait); `reserved` and `shared` try a write lock on the bytes SQLite's unix VFS locks for RESERVED and
    /// SHARED (os_unix.c: PENDING_BYTE 0x40000000, RESERVED_BYTE one past it, then 510 SHARED bytes), which works on
    /// an encrypted file too. Prints "free" or "locked…".
    static func otherProcess(_ probe: String, _ path: String, in directory: TemporaryDirectory) throws -> String {
        let script = """
            import fcntl, os, sqlite3, sys
            path, probe = sys.argv[1], sys.argv[2]
            if probe == "begin":
                connection = sqlite3.connect(path, timeout=0, isolation_level=None)
                try:
                    connection.execute("BEGIN IMMEDIATE")
                    print("free")
                    connection.execute("ROLLBACK")
                except sqlite3.OperationalError as error:
                    print("locked:", error)
            else:
                start, length = (0x40000001, 1) if probe == "reserved" else (0x40000002, 510)
                descriptor = os.open(path, os.O_RDWR)
                try:
                    fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, length, start)
                    print("free")
                except OSError as error:
                    print("locked:", error.strerror)
            """
        let output = directory.path("probe-\(UUID().uuidString).out")
        let python = try ChildProcess("/usr/bin/env", ["python3", "-c", script, path, probe], stdout: .file(output))
        #expect(python.waitBlocking() == .exited(0))
        return (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            ?? ""
    }

    static func rollbackJournal() -> GQLDatabase.Configuration {
        var configuration = GQLDatabase.Configuration()
        configuration.rollbackJournal = true
        return configuration
    }

    @Test func openingAPlainFileAgainKeepsAWritersLock() throws {
        let directory = try TemporaryDirectory(prefix: "gqllock")
        defer { directory.cleanup() }
        let path = directory.path("plain.sqlite")
        let db = try GQLDatabase(path: path, configuration: Self.rollbackJournal())
        try makeUser(1, "first").insert(db)
        #expect(try Self.otherProcess("begin", path, in: directory) == "free", "the probe can see a free file")
        let seen = try db.write { tx -> String in
            // BEGIN IMMEDIATE and a write: this process holds RESERVED on the file.
            try makeUser(2, "second").insert(tx)
            let again = try GQLDatabase(path: path, configuration: Self.rollbackJournal())
            defer { try? again.close() }
            return try Self.otherProcess("begin", path, in: directory)
        }
        #expect(seen.hasPrefix("locked: database is locked"), "another process began a write: \(seen)")
        #expect(try User.count(db) == 2)
    }

    @Test func openingAnEncryptedFileAgainKeepsAWritersLock() throws {
        let directory = try TemporaryDirectory(prefix: "gqllock")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.key, configuration: Self.rollbackJournal())
        try makeUser(1, "first").insert(db)
        #expect(try Self.otherProcess("reserved", path, in: directory) == "free", "the probe can see a free file")
        let seen = try db.write { tx -> String in
            try makeUser(2, "second").insert(tx)
            // Reads the header and checks the key against page 1 before SQLite opens the file.
            let again = try GQLDatabase(path: path, key: Self.key, configuration: Self.rollbackJournal())
            defer { try? again.close() }
            return try Self.otherProcess("reserved", path, in: directory)
        }
        #expect(seen.hasPrefix("locked"), "the RESERVED lock was dropped: \(seen)")
        #expect(try User.count(db) == 2)
    }

    /// In WAL mode every open connection keeps SHARED on the file; the last one to close checks that no other
    /// process does before it checkpoints and deletes the WAL.
    @Test func openingAnEncryptedWALFileAgainKeepsTheSharedLock() throws {
        let directory = try TemporaryDirectory(prefix: "gqllock")
        defer { directory.cleanup() }
        let path = directory.path("secret.sqlite")
        let db = try GQLDatabase(path: path, key: Self.key)
        try makeUser(1, "first").insert(db)
        #expect(try User.count(db) == 1)
        let again = try GQLDatabase(path: path, key: Self.key)
        let seen = try Self.otherProcess("shared", path, in: directory)
        #expect(seen.hasPrefix("locked"), "the SHARED lock was dropped: \(seen)")
        try again.close()
        try makeUser(2, "second").insert(db)
        #expect(try User.count(db) == 2)
        // Copies and plain opens read the header the same way.
        Self.expectNoDrop(path, directory) {
            try GQLDatabase.decrypt(path: path, to: directory.path("copy.sqlite"), key: Self.key)
        }
        Self.expectNoDrop(path, directory) { _ = try? GQLDatabase(path: path) }
    }

    static func expectNoDrop(
        _ path: String, _ directory: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            let seen = try otherProcess("shared", path, in: directory)
            #expect(seen.hasPrefix("locked"), "the SHARED lock was dropped: \(seen)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }
}
