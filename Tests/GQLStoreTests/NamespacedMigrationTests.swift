import Foundation
import GQLCore
import GQLStore
import Testing

/// `GQLMigrator(namespace:)`: a module's own numbered steps, recorded in `gql_migrations`, beside the app's
/// `PRAGMA user_version` steps.
@Suite struct NamespacedMigrationTests {
    private func outbox(_ log: StepLog, steps: Int = 2) -> GQLMigrator {
        var migrator = GQLMigrator(namespace: "gqlsync")
        migrator.step(1, "outbox") { tx in
            log.ran(1)
            try tx.execute("CREATE TABLE gqlsync_outbox (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        }
        if steps >= 2 {
            migrator.step(2, "outbox index") { tx in
                log.ran(2)
                try tx.execute("CREATE INDEX gqlsync_outbox_body ON gqlsync_outbox (body)")
            }
        }
        if steps >= 3 {
            migrator.step(3, "failed items") { tx in
                log.ran(3)
                try tx.execute("CREATE TABLE gqlsync_failed (id INTEGER PRIMARY KEY)")
            }
        }
        return migrator
    }

    private func recorded(_ db: GQLDatabase) throws -> [String] {
        try db.fetchAll(sql: "SELECT namespace, version, name FROM gql_migrations ORDER BY namespace, version")
            .map {
                "\($0["namespace"]?.stringValue ?? "?") \($0["version"]?.intValue ?? -1) \($0["name"]?.stringValue ?? "?")"
            }
    }

    @Test func aNamespaceVersionsItsStepsWithoutTouchingUserVersion() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var app = GQLMigrator()
        app.step(1, "app table") { tx in try tx.execute("CREATE TABLE Note (id INTEGER PRIMARY KEY)") }
        #expect(try app.migrate(db) == [1])

        let log = StepLog()
        let sync = outbox(log)
        #expect(try sync.appliedVersion(db) == 0)
        #expect(try sync.migrate(db) == [1, 2])
        #expect(log.all == [1, 2])
        #expect(try sync.appliedVersion(db) == 2)
        #expect(try GQLMigrator.version(of: db) == 1)  // the app's numbering is untouched
        #expect(try app.appliedVersion(db) == 1)
        #expect(try recorded(db) == ["gqlsync 1 outbox", "gqlsync 2 outbox index"])

        // The app moves on independently; so does the module.
        app.step(2, "app index") { tx in try tx.execute("CREATE INDEX note_id ON Note (id)") }
        #expect(try app.migrate(db) == [2])
        #expect(try outbox(log, steps: 3).migrate(db) == [3])
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: db) == 2)
    }

    @Test func twoNamespacesKeepSeparateNumbers() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var first = GQLMigrator(namespace: "first")
        first.step(1) { tx in try tx.execute("CREATE TABLE a (id INTEGER PRIMARY KEY)") }
        var second = GQLMigrator(namespace: "second")
        second.step(1) { tx in try tx.execute("CREATE TABLE b (id INTEGER PRIMARY KEY)") }
        second.step(2) { tx in try tx.execute("CREATE TABLE c (id INTEGER PRIMARY KEY)") }
        #expect(try first.migrate(db) == [1])
        #expect(try second.migrate(db) == [1, 2])
        #expect(try first.migrate(db) == [])
        #expect(try first.appliedVersion(db) == 1)
        #expect(try second.appliedVersion(db) == 2)
        #expect(try GQLMigrator.version(of: db) == 0)
    }

    @Test func aFileNewerThanTheNamespacesStepsIsADowngrade() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = StepLog()
        try outbox(log, steps: 3).migrate(db)
        let error = try #require(throws: GQLError.self) { try outbox(log, steps: 2).migrate(db) }
        #expect(error.code == .downgradeAttempt)
        #expect(error.message.contains("namespace 'gqlsync' is at version 3"))
    }

    @Test func aFailingStepRollsBackAndRecordsNothing() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = StepLog()
        var migrator = outbox(log, steps: 1)
        migrator.step(2, "broken") { tx in
            try tx.execute("CREATE TABLE half_done (id INTEGER PRIMARY KEY)")
            try tx.execute("THIS IS NOT SQL")
        }
        let error = try #require(throws: GQLError.self) { try migrator.migrate(db) }
        #expect(error.code == .migrationFailed)
        #expect(error.message.contains("step 2 (broken)"))
        #expect(error.message.contains("namespace 'gqlsync' stays at version 1"))
        #expect(try migrator.appliedVersion(db) == 1)
        #expect(try recorded(db) == ["gqlsync 1 outbox"])
        #expect(!(try db.tableNames()).contains("half_done"))
    }

    @Test func anEmptyNamespaceIsRefused() throws {
        let temp = try TempDatabase()
        var migrator = GQLMigrator(namespace: "")
        migrator.step(1) { _ in }
        let error = try #require(throws: GQLError.self) { try migrator.migrate(temp.db) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("namespace"))
    }

    @Test func migrateRacingOnOneFileAppliesEachStepOnce() throws {
        let temp = try TempDatabase()
        let log = StepLog()
        let migrator = outbox(log, steps: 3)
        let failures = Failures()
        // Four database objects on one file, as four processes would have.
        let databases = try (0..<4).map { _ in try GQLDatabase(path: temp.path) }
        DispatchQueue.concurrentPerform(iterations: databases.count) { index in
            do { try migrator.migrate(databases[index]) } catch { failures.record("\(error)") }
        }
        #expect(failures.all == [])
        #expect(log.all == [1, 2, 3])
        #expect(try recorded(temp.db) == ["gqlsync 1 outbox", "gqlsync 2 outbox index", "gqlsync 3 failed items"])
    }
}
