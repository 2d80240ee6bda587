import Foundation
import GQLStore

/// The steps of `gql-cli demo`, each printing what it did and what came back.
///
/// Everything is deterministic: fixed data, observer output printed only after `observersIdle()`.
struct DemoTour: DemoStep {
    typealias User = DemoCommand.User
    typealias UserV2 = DemoCommand.UserV2

    /// A write the demo throws away on purpose.
    private struct Abandon: Error {}

    let path: String

    func run() async throws {
        print("GraphQLite demo: a tour of the local store")
        print("Database: \(path)")
        try await firstVersion()
        try secondVersion()
    }

    /// Steps 1-5 on the first version of the app; the database closes when this returns.
    private func firstVersion() async throws {
        let db = try GQLDatabase(path: path)
        try objects(db)
        try dictionaries(db)
        try transactions(db)
        try await observers(db)
        try migrations(db)
    }

    // MARK: 1. Objects

    private func objects(_ db: GQLDatabase) throws {
        heading("1. Objects")
        try db.register(User.self)
        say("db.register(User.self) created the table:")
        say("  " + (try createStatement(db)))
        var john = User(1001, "John Smith", age: 42)
        try john.insert(db)
        say("insert        \(john.summary)")
        let others = [
            User(1002, "Jane Doe", age: 35), User(1003, "Ann Lee", age: 28, nickname: "annie"),
            User(1004, "Bob Stone", age: 51), User(1005, "Eve Park", age: 19),
        ]
        for user in others { try user.insert(db) }
        say("insert        " + others.map(\.summary).joined(separator: "; "))
        john.age = 43
        try john.update(db)
        say("update        1001 age 42 -> 43")
        try User(1006, "Max Kim", age: 64).insertUpdate(db)
        say("insertUpdate  1006 was new: \(try fetch(db, 1006))")
        try User(1002, "Jane Doe", age: 36).updateInsert(db)
        say("updateInsert  1002 existed: \(try fetch(db, 1002))")
        say("fetchOne(key: 1001) -> \(try fetch(db, 1001))")
        let oldest = try User.fetchAll(db, "age >= ?", [30], order: "age DESC", limit: 3)
        say("fetchAll(\"age >= ?\", [30], order: \"age DESC\", limit: 3) -> " + list(oldest))
        let young = try User.fetchAll(
            db, "age >= :min AND age <= :max", [":min": 18, ":max": 30], order: "name", limit: 5, offset: 0)
        say(
            "fetchAll(\"age >= :min AND age <= :max\", [\":min\": 18, \":max\": 30], order: \"name\") -> " + list(young)
        )
        say("count() -> \(try User.count(db)), count(\"age > 40\") -> \(try User.count(db, "age > 40"))")
        say(
            "check(key: 1001) -> \(try User.check(db, key: 1001)), check(key: 9999) -> \(try User.check(db, key: 9999))"
        )
        let approved = try User.updateAll(db, ["approved": true], "age >= ? AND age <= ?", [30, 45])
        say("updateAll([\"approved\": true], \"age >= ? AND age <= ?\", [30, 45]) -> \(approved) rows")
        say("deleteOne(key: 1005) -> \(try User.deleteOne(db, key: 1005)); count() -> \(try User.count(db))")
    }

    // MARK: 2. Dictionary API

    private func dictionaries(_ db: GQLDatabase) throws {
        heading("2. Dictionary API")
        if let john = try User.fetchOne(db, key: 1001) {
            say("values() of 1001 -> \(GQLValue.object(try john.values()))")
        }
        try db.insert("User", ["userId": 2001, "name": "Dora Diaz", "age": 47])
        say("db.insert(\"User\", [\"userId\": 2001, \"name\": \"Dora Diaz\", \"age\": 47])")
        try db.update("User", ["userId": 2001, "nickname": "dd"])
        say("db.update(\"User\", [\"userId\": 2001, \"nickname\": \"dd\"])")
        let rows = try db.fetchAll("User", "age > ?", [45], order: "userId")
        say("db.fetchAll(\"User\", \"age > ?\", [45], order: \"userId\") ->")
        for row in rows { say("  \(GQLValue.object(row))") }
        say("db.count(\"User\") -> \(try db.count("User"))")
    }

    // MARK: 3. Transactions

    private func transactions(_ db: GQLDatabase) throws {
        heading("3. Transactions")
        try db.write { tx in
            try User(3001, "Carl Cruz", age: 33).insert(tx)
            try User(3002, "Dina Wolf", age: 58).insert(tx)
        }
        say("write { insert 3001; insert 3002 } committed -> count() \(try User.count(db))")
        do {
            try db.write { tx in
                try User(3003, "Gus Hall", age: 80).insert(tx)
                try tx.execute("UPDATE \"User\" SET age = age + 100")
                say("  inside the transaction: count() \(try User.count(tx)), 1001 is \(try fetch(tx, 1001))")
                throw Abandon()
            }
        } catch is Abandon {
            say("write { insert 3003; every age + 100; throw } rolled back")
        }
        say("after the rollback: count() \(try User.count(db)), 1001 is \(try fetch(db, 1001))")
    }

    // MARK: 4. Observers

    private func observers(_ db: GQLDatabase) async throws {
        heading("4. Observers")
        let heard = Recorder()
        let id = try User.createObserver(db, [.insert, .update, .delete], "OBJ.age > 40") { type, key in
            heard.record("\(type) \(key)")
        }
        say("createObserver(db, [.insert, .update, .delete], \"OBJ.age > 40\") -> id \(id)")
        let changes = User.observe(db, [.insert])
        say("observe(db, [.insert]) -> an AsyncSequence, read by a task")
        let reader = Task { () throws -> [GQLChange] in
            var seen: [GQLChange] = []
            for try await change in changes {
                seen.append(change)
                if seen.count == 2 { break }
            }
            return seen
        }

        try User(4001, "Ida Moss", age: 70).insert(db)
        try User(4002, "Leo Hart", age: 20).insert(db)
        try User.updateOne(db, ["age": 44], key: 1001)
        _ = try User.deleteOne(db, key: 1004)
        _ = try? await db.write { tx in
            try User(4003, "Zoe Ray", age: 80).insert(tx)
            throw Abandon()
        }
        say("wrote: insert 4001 (age 70), insert 4002 (age 20), update 1001 (age 44), delete 1004 (age 51),")
        say("       insert 4003 (age 80) in a transaction that rolled back")
        await db.observersIdle()
        say("await db.observersIdle()")
        say("callback heard:      " + heard.all.joined(separator: ", "))
        let seen = try await collect(reader)
        say("AsyncSequence heard: " + seen.map { "\($0.type) \($0.key)" }.joined(separator: ", "))
        say("nobody heard 4003: events of a rolled-back write are dropped")

        User.removeObserver(db, id)
        try User(4004, "Sam Vale", age: 90).insert(db)
        await db.observersIdle()
        say("removeObserver, insert 4004 (age 90) -> callback heard \(heard.all.count - 3) more")
    }

    /// The reader task's changes, or an error after 5 s so a lost event cannot hang the demo.
    private func collect(_ reader: Task<[GQLChange], any Error>) async throws -> [GQLChange] {
        let result = try await withThrowingTaskGroup(of: [GQLChange]?.self) { group in
            group.addTask { try await reader.value }
            group.addTask {
                try await Task.sleep(for: .seconds(5))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        reader.cancel()
        guard let result else { throw CLIError("the AsyncSequence did not deliver its changes within 5 s") }
        return result
    }

    // MARK: 5. Migrations

    private func migrations(_ db: GQLDatabase) throws {
        heading("5. Migrations")
        say("user_version before: \(try GQLMigrator.version(of: db))")
        var migrator = GQLMigrator()
        migrator.step(1, "index users by age") { tx in
            try tx.execute("CREATE INDEX user_age ON \"User\"(age)")
        }
        migrator.step(2, "approve everyone over 60") { tx in
            try User.updateAll(tx, ["approved": true], "age > ?", [60])
        }
        let applied = try migrator.migrate(db)
        say("migrate: step 1 \"index users by age\", step 2 \"approve everyone over 60\" -> applied \(applied)")
        say("user_version after: \(try GQLMigrator.version(of: db))")
        let indexes = try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'User'")
        say("indexes on User: " + indexes.compactMap { $0["name"]?.stringValue }.sorted().joined(separator: ", "))
        say("approved over 60: " + list(try User.fetchAll(db, "age > 60", order: "userId")))
        say("migrate again -> applied \(try migrator.migrate(db))")
    }

    // MARK: 6. Automatic ADD COLUMN

    /// Opens the file again as the next version of the app, whose UserV2 has an `email` property.
    private func secondVersion() throws {
        heading("6. A new property adds its column")
        let db = try GQLDatabase(path: path)
        say("columns of User: " + (try columnNames(db)).joined(separator: ", "))
        try db.register(UserV2.self)
        say("reopened the file; db.register(UserV2.self), where UserV2 adds `var email = \"unknown@example.com\"`")
        say("columns of User: " + (try columnNames(db)).joined(separator: ", "))
        if let john = try UserV2.fetchOne(db, key: 1001) {
            say("UserV2.fetchOne(key: 1001) -> \(john.name), email \"\(john.email)\" (the default, for existing rows)")
        }
        var ned = UserV2()
        ned.userId = 5001
        ned.name = "Ned Park"
        ned.age = 30
        ned.email = "ned@example.com"
        try ned.insert(db)
        say(
            "insert 5001 with email -> \(try UserV2.count(db, "email <> ?", ["unknown@example.com"])) row with an email of its own"
        )
        say(
            "user_version still \(try GQLMigrator.version(of: db)); nothing was dropped: count() \(try UserV2.count(db))"
        )
        // Move every commit from the WAL into the file itself, so a kept file is whole on its own.
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: Helpers

    private func fetch(_ db: some GQLDatabaseContext, _ key: Int) throws -> String {
        try User.fetchOne(db, key: key)?.summary ?? "nothing"
    }

    private func list(_ users: [User]) -> String {
        users.isEmpty ? "nothing" : users.map(\.summary).joined(separator: "; ")
    }

    private func createStatement(_ db: GQLDatabase) throws -> String {
        let rows = try db.fetchAll(sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'User'")
        return rows.first?["sql"]?.stringValue ?? "(none)"
    }

    private func columnNames(_ db: GQLDatabase) throws -> [String] {
        try db.fetchAll(sql: "SELECT name FROM pragma_table_info('User') ORDER BY cid").compactMap {
            $0["name"]?.stringValue
        }
    }
}

/// What an observer callback heard, kept behind a lock: callbacks run on the store's queue.
private final class Recorder: Sendable {
    private let lines = GQLLocked<[String]>([])

    func record(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    var all: [String] { lines.withLock { $0 } }
}
