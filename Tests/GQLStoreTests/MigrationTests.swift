import Foundation
import GQLCore
import GQLStore
import Testing

/// The record of which migration steps ran, in order, shared with the steps' closures.
final class StepLog: Sendable {
    private let steps = TestLocked<[Int]>([])
    func ran(_ version: Int) { steps.withLock { $0.append(version) } }
    var all: [Int] { steps.value }
}

@Suite struct MigrationTests {
    /// `PRAGMA user_version` read with raw SQL, independently of `GQLMigrator.version(of:)`.
    private func userVersion(_ db: GQLDatabase) throws -> Int64? {
        try db.fetchAll(sql: "PRAGMA user_version").first?["user_version"]?.intValue
    }

    private func tableNames(_ db: GQLDatabase) throws -> Set<String> {
        Set(try db.tableNames())
    }

    /// Three steps: a table, its rows, an index. Step `n` records `n` in `log`.
    private func threeSteps(_ log: StepLog) -> GQLMigrator {
        var migrator = GQLMigrator()
        migrator.step(1, "create Note") { tx in
            log.ran(1)
            try tx.execute(#"CREATE TABLE "Note" ("id" INTEGER PRIMARY KEY, "text" TEXT NOT NULL)"#)
        }
        migrator.step(2, "fill Note") { tx in
            log.ran(2)
            try tx.execute(#"INSERT INTO "Note" ("id", "text") VALUES (1, 'one'), (2, 'two')"#)
        }
        migrator.step(3, "index Note") { tx in
            log.ran(3)
            try tx.execute(#"CREATE INDEX "note_text" ON "Note" ("text")"#)
        }
        return migrator
    }

    @Test func stepsRunInOrderAndSetTheVersion() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(try GQLMigrator.version(of: db) == 0)
        #expect(try userVersion(db) == 0)

        let log = StepLog()
        let migrator = threeSteps(log)
        #expect(migrator.latestVersion == 3)
        #expect(try migrator.migrate(db) == [1, 2, 3])
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: db) == 3)
        #expect(try userVersion(db) == 3)
        #expect(try db.count("Note") == 2)
        let indexes = try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Note'")
        #expect(indexes.compactMap { $0["name"]?.stringValue } == ["note_text"])
    }

    @Test func stepsAddedOutOfOrderRunByVersion() throws {
        let temp = try TempDatabase()
        let log = StepLog()
        var migrator = GQLMigrator()
        migrator.step(3) { _ in log.ran(3) }
        migrator.step(1) { _ in log.ran(1) }
        migrator.step(2) { _ in log.ran(2) }

        #expect(try migrator.migrate(temp.db) == [1, 2, 3])
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: temp.db) == 3)
    }

    @Test func eachStepCommitsInItsOwnTransactionBeforeTheNextStarts() throws {
        let temp = try TempDatabase()
        let db = temp.db
        // What a reader connection (committed data only) sees while each step runs.
        let seen = TestLocked<[(version: Int, userVersion: Int, notes: Int)]>([])
        var migrator = GQLMigrator()
        for version in 1...3 {
            migrator.step(version) { tx in
                if version == 1 {
                    try tx.execute(#"CREATE TABLE "Note" ("id" INTEGER PRIMARY KEY)"#)
                }
                try tx.execute(#"INSERT INTO "Note" ("id") VALUES (?)"#, [version])
                let committedNotes = try db.tableNames().contains("Note") ? try db.count("Note") : 0
                let committedVersion = try GQLMigrator.version(of: db)
                seen.withLock { $0.append((version, committedVersion, committedNotes)) }
                // Inside the step's own transaction its work is visible.
                #expect(try tx.count("Note") == version)
            }
        }

        #expect(try migrator.migrate(db) == [1, 2, 3])
        let steps = seen.withLock { $0 }
        // While step n runs, steps 1…n-1 are committed (version n-1, n-1 notes) and step n is not.
        #expect(steps.map(\.version) == [1, 2, 3])
        #expect(steps.map(\.userVersion) == [0, 1, 2])
        #expect(steps.map(\.notes) == [0, 1, 2])
        #expect(try db.count("Note") == 3)
    }

    @Test func migratingAgainAppliesNothing() throws {
        let temp = try TempDatabase()
        let log = StepLog()
        let migrator = threeSteps(log)
        #expect(try migrator.migrate(temp.db) == [1, 2, 3])
        #expect(try migrator.migrate(temp.db) == [])
        #expect(log.all == [1, 2, 3])
        #expect(try temp.db.count("Note") == 2)

        // A new database object on the same file agrees.
        let reopened = try GQLDatabase(path: temp.path)
        #expect(try migrator.migrate(reopened) == [])
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: reopened) == 3)
    }

    @Test func newStepsRunOnTopOfAnOlderVersion() throws {
        let temp = try TempDatabase()
        let log = StepLog()
        var first = GQLMigrator()
        first.step(1) { tx in
            log.ran(1)
            try tx.execute(#"CREATE TABLE "Note" ("id" INTEGER PRIMARY KEY, "text" TEXT NOT NULL)"#)
        }
        #expect(try first.migrate(temp.db) == [1])

        let later = threeSteps(log)  // its step 1 would fail (the table exists) if it ran again
        #expect(try later.migrate(temp.db) == [2, 3])
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: temp.db) == 3)
    }

    @Test func failingStepRollsBackAndKeepsThePreviousVersion() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = StepLog()
        var migrator = GQLMigrator()
        migrator.step(1, "create Note") { tx in
            log.ran(1)
            try tx.execute(#"CREATE TABLE "Note" ("id" INTEGER PRIMARY KEY)"#)
            try tx.execute(#"INSERT INTO "Note" ("id") VALUES (1)"#)
        }
        migrator.step(2, "break things") { tx in
            log.ran(2)
            try tx.execute(#"INSERT INTO "Note" ("id") VALUES (2)"#)
            try tx.execute(#"CREATE TABLE "Scratch" ("id" INTEGER)"#)
            try tx.execute(#"INSERT INTO "Note" ("id") VALUES (1)"#)  // duplicate key: throws
        }
        migrator.step(3, "never runs") { _ in log.ran(3) }

        let error = #expect(throws: GQLError.self) { try migrator.migrate(db) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.message.contains("2") == true)
        #expect(error?.message.contains("break things") == true)
        #expect(log.all == [1, 2])
        #expect(try GQLMigrator.version(of: db) == 1)
        #expect(try userVersion(db) == 1)
        // Step 1's work stays; step 2's is gone.
        #expect(try db.fetchAll(sql: #"SELECT "id" FROM "Note""#).compactMap { $0["id"]?.intValue } == [1])
        #expect(try !tableNames(db).contains("Scratch"))

        // The file as found by a fresh open is the same.
        let reopened = try GQLDatabase(path: temp.path)
        #expect(try GQLMigrator.version(of: reopened) == 1)
        #expect(try reopened.count("Note") == 1)
    }

    @Test func stepThrowingItsOwnErrorIsAMigrationFailure() throws {
        struct Broken: Error {}
        let temp = try TempDatabase()
        try temp.db.register(User.self)
        var migrator = GQLMigrator()
        migrator.step(1, "approve adults") { tx in
            try makeUser(1, age: 40).insert(tx)
            try User.updateAll(tx, ["approved": true], "age >= ?", [18])
            throw Broken()
        }
        let error = #expect(throws: GQLError.self) { try migrator.migrate(temp.db) }
        #expect(error?.code == .migrationFailed)
        #expect(try GQLMigrator.version(of: temp.db) == 0)
        #expect(try User.count(temp.db) == 0)

        // Fixing the step lets the same file migrate.
        var fixed = GQLMigrator()
        fixed.step(1, "approve adults") { tx in
            try makeUser(1, age: 40).insert(tx)
            try User.updateAll(tx, ["approved": true], "age >= ?", [18])
        }
        #expect(try fixed.migrate(temp.db) == [1])
        #expect(try User.fetchOne(temp.db, key: 1)?.approved == true)
    }

    @Test func fileNewerThanTheStepsIsADowngradeAttempt() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = StepLog()
        #expect(try threeSteps(log).migrate(db) == [1, 2, 3])
        try await db.execute("PRAGMA user_version = 7")

        let error = #expect(throws: GQLError.self) { try threeSteps(log).migrate(db) }
        #expect(error?.code == .downgradeAttempt)
        #expect(log.all == [1, 2, 3])
        #expect(try GQLMigrator.version(of: db) == 7)

        // Code without any steps cannot open a versioned file either.
        let none = #expect(throws: GQLError.self) { try GQLMigrator().migrate(db) }
        #expect(none?.code == .downgradeAttempt)
    }

    @Test(arguments: [[1, 3], [2, 3], [1, 1, 2], [0, 1], [-1, 1, 2]])
    func stepsNotNumberedOneTwoThreeAreRejected(versions: [Int]) throws {
        let temp = try TempDatabase()
        let log = StepLog()
        var migrator = GQLMigrator()
        for version in versions { migrator.step(version) { _ in log.ran(version) } }

        let error = #expect(throws: GQLError.self) { try migrator.migrate(temp.db) }
        #expect(error?.code == .invalidArgument)
        #expect(log.all == [], "no step may run when the numbering is wrong")
        #expect(try GQLMigrator.version(of: temp.db) == 0)
    }

    @Test func noStepsOnAFreshFileDoesNothing() throws {
        let temp = try TempDatabase()
        #expect(try GQLMigrator().migrate(temp.db) == [])
        #expect(try GQLMigrator.version(of: temp.db) == 0)
    }
}
