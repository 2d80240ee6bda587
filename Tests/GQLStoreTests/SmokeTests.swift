import Foundation
import GQLStore
import Testing

@Suite struct SmokeTests {
    @Test func insertFetchUpdateDelete() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var user = makeUser(1001, "John Smith", age: 42)
        try user.insert(db)
        #expect(try User.fetchOne(db, key: 1001) == user)
        user.age = 43
        try user.update(db)
        #expect(try User.fetchOne(db, key: 1001)?.age == 43)
        #expect(try User.count(db, "age > 40") == 1)
        let rows = try db.fetchAll("User", "age > ?", [40])
        #expect(rows.first?["approved"] == false)
        #expect(rows.first?["nickname"] == .null)
        try User.updateAll(db, ["approved": true], "age >= ? AND age <= ?", [40, 50])
        #expect(try User.fetchOne(db, key: 1001)?.approved == true)
        #expect(try user.delete(db))
        #expect(try User.check(db, key: 1001) == false)
    }

    @Test func observerDeliversAfterCommit() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let changes = User.observe(db, [.insert, .update, .delete], "OBJ.age > 40")
        try makeUser(1, age: 50).insert(db)
        try makeUser(2, age: 20).insert(db)
        _ = try? await db.write { tx in
            try makeUser(3, age: 60).insert(tx)
            throw CancellationError()
        }
        try User.deleteOne(db, key: 1)
        var seen: [GQLChange] = []
        for try await change in changes {
            seen.append(change)
            if seen.count == 2 { break }
        }
        #expect(seen == [GQLChange(type: .insert, key: 1), GQLChange(type: .delete, key: 1)])
    }
}

@Suite struct TableObserverTests {
    @Test func observersByTableNameSeeCommittedChanges() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try await db.execute("CREATE TABLE Note (noteId TEXT PRIMARY KEY, body TEXT, stars INTEGER)")
        let log = ObservedChanges()
        let id = try db.createObserver("Note", [.insert, .update], "OBJ.stars >= 3", log.callback)
        let inserts = db.observe("Note", [.insert])
        try db.insert("Note", ["noteId": "a", "body": "one", "stars": 5])
        try db.insert("Note", ["noteId": "b", "body": "two", "stars": 1])
        try db.update("Note", ["noteId": "b", "stars": 4])
        await db.observersIdle()
        #expect(log.all == [GQLChange(type: .insert, key: "a"), GQLChange(type: .update, key: "b")])
        var seen: [GQLValue] = []
        for try await change in inserts {
            seen.append(change.key)
            if seen.count == 2 { break }
        }
        #expect(seen == ["a", "b"])
        db.removeObserver(id)
        #expect(db.observerCount == 0)
    }

    @Test func aTableWithoutAKeyReportsRowidsAndUnknownOrCompositeTablesAreRefused() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try await db.execute("CREATE TABLE Log (line TEXT)")
        try await db.execute("CREATE TABLE Pair (a INTEGER, b INTEGER, PRIMARY KEY (a, b))")
        let log = ObservedChanges()
        _ = try db.createObserver("Log", [.insert], nil, log.callback)
        try db.insert("Log", ["line": "first"])
        try db.insert("Log", ["line": "second"])
        await db.observersIdle()
        #expect(log.keys == [1, 2])
        let composite = try #require(throws: GQLError.self) { try db.createObserver("Pair", [.insert]) { _, _ in } }
        #expect(composite.code == .missingPrimaryKey)
        let unknown = try #require(throws: GQLError.self) { try db.createObserver("Nope", [.insert]) { _, _ in } }
        #expect(unknown.code == .unknownTable)
    }
}

@Suite struct ExecuteTransactionTests {
    @Test func executeThatLeavesATransactionOpenIsRolledBackAndRefused() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let error = try #require(throws: GQLError.self) {
            try db.execute(#"BEGIN; INSERT INTO "User" ("userId") VALUES (1)"#)
        }
        #expect(error.code == .invalidArgument)
        #expect(try User.count(db) == 0)
        // The writer is usable again, and a complete script still works.
        try makeUser(2).insert(db)
        try db.execute(#"BEGIN; INSERT INTO "User" ("userId") VALUES (3); COMMIT"#)
        #expect(try User.fetchAll(db, order: "userId").map(\.userId) == [2, 3])
    }
}
