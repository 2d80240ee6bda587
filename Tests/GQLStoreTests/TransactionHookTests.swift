import Foundation
import GQLCore
import GQLStore
import Testing

/// `tx.afterCommit { }` and `tx.onRollback { }`: once, after the outcome, free to write again.
@Suite struct TransactionHookTests {
    private struct Refused: Error {}

    @Test func commitHooksRunOnceInOrderAfterTheCommitIsVisible() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = TestLocked<[String]>([])
        try db.write { tx in
            try makeUser(1).insert(tx)
            try tx.afterCommit {
                // A reader connection sees the row: the commit is done, not in progress.
                let seen = (try? User.check(db, key: 1)) ?? false
                log.withLock { $0.append("first \(seen)") }
            }
            try tx.afterCommit { log.withLock { $0.append("second") } }
            try tx.onRollback { log.withLock { $0.append("rollback") } }
            log.withLock { $0.append("body") }
        }
        #expect(log.value == ["body", "first true", "second"])
        try db.write { tx in try makeUser(2).insert(tx) }
        #expect(log.value == ["body", "first true", "second"])  // not run again by a later write
    }

    @Test func rollbackHooksRunWhenTheBodyThrowsBeforeTheErrorReachesTheCaller() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = TestLocked<[String]>([])
        #expect(throws: Refused.self) {
            try db.write { tx in
                try makeUser(1).insert(tx)
                try tx.afterCommit { log.withLock { $0.append("commit") } }
                try tx.onRollback {
                    let exists = (try? User.check(db, key: 1)) ?? true
                    log.withLock { $0.append("rollback, row exists: \(exists)") }
                }
                throw Refused()
            }
        }
        #expect(log.value == ["rollback, row exists: false"])
    }

    @Test func aFailedCommitRunsTheRollbackHooks() throws {
        var configuration = GQLDatabase.Configuration()
        configuration.foreignKeys = true
        let temp = try TempDatabase(configuration: configuration)
        let db = temp.db
        try db.execute(
            """
            CREATE TABLE Parent (id INTEGER PRIMARY KEY);
            CREATE TABLE Child (id INTEGER PRIMARY KEY,
                parent INTEGER REFERENCES Parent(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        let log = TestLocked<[String]>([])
        let error = try #require(throws: GQLError.self) {
            try db.write { tx in
                // Deferred: the statement succeeds, the COMMIT fails.
                try tx.execute("INSERT INTO Child (id, parent) VALUES (1, 99)")
                try tx.afterCommit { log.withLock { $0.append("commit") } }
                try tx.onRollback { log.withLock { $0.append("rollback") } }
            }
        }
        #expect(error.code == .sqlite)
        #expect(error.message.contains("FOREIGN KEY"))
        #expect(log.value == ["rollback"])
        #expect(try db.count("Child") == 0)
    }

    @Test func hooksMayWriteToTheDatabaseAgain() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.write { tx in
            try makeUser(1).insert(tx)
            try tx.afterCommit { try? makeUser(2).insert(db) }
        }
        #expect(try User.count(db) == 2)
        try? db.write { tx in
            try makeUser(3).insert(tx)
            try tx.onRollback {
                try? db.write { tx in try makeUser(4).insert(tx) }
            }
            throw Refused()
        }
        #expect(try User.fetchAll(db, order: "userId").map(\.userId) == [1, 2, 4])
    }

    @Test func asyncWritesRunTheirHooksBeforeReturning() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = TestLocked<[String]>([])
        try await db.write { tx in
            try makeUser(1).insert(tx)
            try tx.afterCommit { log.withLock { $0.append("commit") } }
        }
        #expect(log.value == ["commit"])
        await #expect(throws: Refused.self) {
            try await db.write { tx in
                try tx.onRollback { log.withLock { $0.append("rollback") } }
                throw Refused()
            }
        }
        #expect(log.value == ["commit", "rollback"])
    }

    @Test func hooksAreRefusedOutsideAnOpenWriteTransaction() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let readError = try #require(throws: GQLError.self) {
            try db.read { tx in try tx.afterCommit {} }
        }
        #expect(readError.code == .invalidArgument)
        #expect(readError.message.contains("db.write"))
        let escaped = try db.write { tx in tx }
        let lateError = try #require(throws: GQLError.self) { try escaped.onRollback {} }
        #expect(lateError.code == .closed)
        #expect(lateError.message.contains("onRollback"))
    }
}
