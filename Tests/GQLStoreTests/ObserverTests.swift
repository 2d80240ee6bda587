import Foundation
import GQLCore
import GQLStore
import Testing

/// The names of the TEMP triggers on the writer connection (observers live there).
func observerTriggerNames(_ db: GQLDatabase) async throws -> [String] {
    try await db.write { tx in
        try tx.fetchAll(sql: "SELECT name FROM sqlite_temp_master WHERE type = 'trigger' ORDER BY name")
            .compactMap { $0["name"]?.stringValue }
    }
}

/// Waits for the callbacks of every commit so far, and for those of the commits those callbacks made.
///
/// `observersIdle()` covers the commits made before it was called; a callback that writes commits while
/// it runs, so one more round covers those.
func observersSettled(_ db: GQLDatabase) async {
    await db.observersIdle()
    await db.observersIdle()
}

/// A type whose table and columns are SQL keywords, observed with a condition that quotes them.
private struct KeywordGroup: GQLObject {
    var order = 0
    var select = ""
    static func primaryKey() -> String { "order" }
    static func tableName() -> String { "Group" }
}

/// A type with a text primary key.
private struct TaggedNote: GQLObject {
    var tag = ""
    var size = 0
    static func primaryKey() -> String { "tag" }
}

@Suite(.timeLimit(.minutes(2))) struct ObserverTests {
    // MARK: Types

    @Test func eachTypeReachesOnlyObserversOfThatType() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let inserts = ObservedChanges(), updates = ObservedChanges(), deletes = ObservedChanges()
        let everything = ObservedChanges()
        _ = try User.createObserver(db, [.insert], nil, inserts.callback)
        _ = try User.createObserver(db, [.update], nil, updates.callback)
        _ = try User.createObserver(db, [.delete], nil, deletes.callback)
        _ = try User.createObserver(db, [.insert, .update, .delete], nil, everything.callback)
        #expect(db.observerCount == 4)

        var user = makeUser(1, age: 50)
        try user.insert(db)
        user.age = 51
        try user.update(db)
        #expect(try user.delete(db))
        await db.observersIdle()

        #expect(inserts.all == [.insert(1)])
        #expect(updates.all == [.update(1)])
        #expect(deletes.all == [.delete(1)])
        #expect(everything.all == [.insert(1), .update(1), .delete(1)])
    }

    @Test func everyVerbReportsOneEventPerRow() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        try db.insert("User", ["userId": 1, "name": "a", "age": 10])
        try makeUser(2, age: 20).insert(db)
        try makeUser(3, age: 30).insertUpdate(db)
        try db.update("User", ["userId": 1, "age": 11])
        #expect(try User.updateOne(db, ["approved": true], key: 2))
        #expect(try User.updateAll(db, ["name": "x"], "age >= ?", [20]) == 2)
        #expect(try User.deleteOne(db, key: 1))
        #expect(try User.deleteAll(db) == 2)
        await db.observersIdle()

        let all = log.all
        #expect(all.prefix(3) == [.insert(1), .insert(2), .insert(3)])
        #expect(all.dropFirst(3).prefix(2) == [.update(1), .update(2)])
        #expect(Set(all.dropFirst(5).prefix(2)) == [.update(2), .update(3)])
        #expect(all.dropFirst(7).prefix(1) == [.delete(1)])
        #expect(Set(all.dropFirst(8)) == [.delete(2), .delete(3)])
        #expect(all.count == 10)
    }

    @Test func insertUpdateOfAnExistingRowReportsAnUpdate() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        try makeUser(1, age: 20).insertUpdate(db)  // new row
        try makeUser(1, age: 21).insertUpdate(db)  // existing row
        try makeUser(2, age: 20).updateInsert(db)  // new row
        try makeUser(2, age: 22).updateInsert(db)  // existing row
        try db.insertUpdate("User", ["userId": 3, "age": 30])  // new row
        try db.insertUpdate("User", ["userId": 3, "age": 31])  // existing row
        await db.observersIdle()

        #expect(log.all == [.insert(1), .update(1), .insert(2), .update(2), .insert(3), .update(3)])
        #expect(try User.fetchOne(db, key: 1)?.age == 21)
        #expect(try User.fetchOne(db, key: 3)?.age == 31)
    }

    // MARK: Conditions

    @Test func conditionSeesNewValuesOnInsertAndUpdateAndOldValuesOnDelete() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        _ = try User.createObserver(db, [.insert, .update, .delete], "OBJ.age > 40", log.callback)

        var young = makeUser(1, age: 30)
        var old = makeUser(2, age: 50)
        try young.insert(db)  // no: 30
        try old.insert(db)  // yes: 50
        young.age = 45
        try young.update(db)  // yes: new value 45
        old.age = 20
        try old.update(db)  // no: new value 20
        try young.delete(db)  // yes: old value 45
        try old.delete(db)  // no: old value 20
        await db.observersIdle()

        #expect(log.all == [.insert(2), .update(1), .delete(1)])
    }

    @Test func deleteConditionAppliesToTheDeletedRowsOldValues() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        for id in 1...6 { try makeUser(id, age: id * 10).insert(db) }  // ages 10 … 60
        let log = ObservedChanges()
        _ = try User.createObserver(db, [.delete], "OBJ.age > 40", log.callback)

        #expect(try User.deleteAll(db) == 6)
        await db.observersIdle()

        #expect(Set(log.all) == [.delete(5), .delete(6)])
        #expect(log.all.count == 2)
    }

    @Test func stringLiteralsAndQuotedNamesInAConditionAreNotRewritten() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        // Rewriting the literals would compare with 'NEW.name' and 'it''s NEW.age' instead.
        let condition = #"OBJ.name = 'OBJ.name' OR OBJ."nickname" = 'it''s OBJ.age' OR obj.age = 99"#
        _ = try User.createObserver(db, [.insert], condition, log.callback)

        try makeUser(1, "OBJ.name").insert(db)  // yes: the literal itself
        try makeUser(2, "NEW.name").insert(db)  // no
        var quoted = makeUser(3, "c")
        quoted.nickname = "it's OBJ.age"
        try quoted.insert(db)  // yes: the doubled quote keeps the literal going
        var rewritten = makeUser(4, "d")
        rewritten.nickname = "it's NEW.age"
        try rewritten.insert(db)  // no
        try makeUser(5, "e", age: 99).insert(db)  // yes: lower-case obj. is the row
        try makeUser(6, "f", age: 98).insert(db)  // no
        await db.observersIdle()

        #expect(log.all == [.insert(1), .insert(3), .insert(5)])
    }

    @Test func keywordTableAndColumnNamesAndTextKeysAreObserved() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let groups = ObservedChanges(), notes = ObservedChanges()
        _ = try KeywordGroup.createObserver(db, .all, #"OBJ."order" > 1 AND OBJ."select" <> 'skip'"#, groups.callback)
        _ = try TaggedNote.createObserver(db, .all, "OBJ.size >= 10", notes.callback)

        try KeywordGroup(order: 1, select: "a").insert(db)  // no: order 1
        try KeywordGroup(order: 2, select: "skip").insert(db)  // no: skipped
        try KeywordGroup(order: 3, select: "b").insert(db)
        try KeywordGroup(order: 3, select: "c").update(db)
        try TaggedNote(tag: "Zoë's", size: 10).insert(db)
        try TaggedNote(tag: "small", size: 1).insert(db)
        try TaggedNote(tag: "Zoë's", size: 12).insertUpdate(db)
        try TaggedNote(tag: "Zoë's").delete(db)  // old size 12
        await db.observersIdle()

        #expect(groups.all == [.insert(3), .update(3)])
        #expect(
            notes.all == [
                GQLChange(type: .insert, key: "Zoë's"), GQLChange(type: .update, key: "Zoë's"),
                GQLChange(type: .delete, key: "Zoë's"),
            ])
    }

    @Test(arguments: [
        "OBJ.age >",  // syntax error
        "OBJ.nope > 1",  // unknown column
        "nope > 1",  // unknown bare column
        "NEW.age > 1",  // only OBJ. names the row
        "no_such_function(OBJ.age)",  // unknown function
        "OBJ.age > ?",  // parameters cannot be used in a trigger
        "OBJ.age > 40) OR (1",  // unbalanced: stays inside the WHEN's parentheses or fails
        #"1); DROP TABLE "User"; --"#,  // a second statement
        "'unterminated",
    ])
    func malformedConditionIsAnErrorAtCreation(condition: String) async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, age: 50).insert(db)
        let log = ObservedChanges()

        do {
            _ = try User.createObserver(db, .all, condition, log.callback)
            // Only a condition that still compiles as one expression may be accepted; it must then work.
            #expect(condition == "OBJ.age > 40) OR (1", "accepted the malformed condition \(condition)")
            return
        } catch let error as GQLError {
            #expect(error.code == .invalidCondition, "\(error)")
            #expect(error.table == "User")
        }

        #expect(db.observerCount == 0)
        #expect(try await observerTriggerNames(db) == [])
        // The database is untouched and still observable.
        #expect(try User.count(db) == 1)
        _ = try User.createObserver(db, [.insert], "OBJ.age > 40", log.callback)
        try makeUser(2, age: 60).insert(db)
        await db.observersIdle()
        #expect(log.all == [.insert(2)])
    }

    @Test func observerWithoutTypesIsAnInvalidArgument() throws {
        let temp = try TempDatabase()
        let error = #expect(throws: GQLError.self) {
            _ = try User.createObserver(temp.db, [], nil) { _, _ in }
        }
        #expect(error?.code == .invalidArgument)
        #expect(temp.db.observerCount == 0)
    }

    @Test func malformedConditionEndsTheAsyncSequenceWithTheError() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        var caught: GQLError?
        do {
            for try await _ in User.observe(db, [.insert], "OBJ.nope > 1") {
                Issue.record("an invalid observation delivered a change")
            }
        } catch let error as GQLError {
            caught = error
        }
        #expect(caught?.code == .invalidCondition)
        #expect(db.observerCount == 0)
    }

    // MARK: Delivery

    @Test func callbacksRunAfterCommitAndSeeTheWholeTransaction() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        // Each callback records what a reader connection (committed data only) sees at that moment.
        let seen = TestLocked<[(GQLChange, Int, Bool)]>([])
        _ = try User.createObserver(db, .all, nil) { type, key in
            let count = (try? User.count(db)) ?? -1
            let exists = (try? User.check(db, key: key)) ?? false
            seen.withLock { $0.append((GQLChange(type: type, key: key), count, exists)) }
        }

        try await db.write { tx in
            for id in 1...10 { try makeUser(id).insert(tx) }
        }
        await db.observersIdle()
        let afterInsert = seen.withLock { $0 }
        #expect(afterInsert.map(\.0) == (1...10).map { GQLChange.insert($0) })
        #expect(afterInsert.allSatisfy { $0.1 == 10 && $0.2 }, "a callback ran before the commit was visible")

        seen.withLock { $0.removeAll() }
        let deleted = try await db.write { tx in try User.deleteAll(tx, "userId <= ?", [5]) }
        #expect(deleted == 5)
        await db.observersIdle()
        let afterDelete = seen.withLock { $0 }
        #expect(afterDelete.map(\.0) == (1...5).map { GQLChange.delete($0) })
        #expect(afterDelete.allSatisfy { $0.1 == 5 && !$0.2 }, "a callback ran before the delete was visible")
    }

    @Test func callbacksArriveOncePerCommittedChangeInCommitOrder() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        for batch in 0..<5 {
            try await db.write { tx in
                for id in batch * 20..<(batch + 1) * 20 { try makeUser(id).insert(tx) }
            }
        }
        #expect(try User.updateAll(db, ["approved": true]) == 100)
        #expect(try User.deleteAll(db, "userId % 2 = 0") == 50)
        await db.observersIdle()
        await db.observersIdle()  // a second wait delivers nothing more

        let all = log.all
        #expect(all.count == 250)
        #expect(Array(all.prefix(100)) == (0..<100).map { GQLChange.insert($0) })
        #expect(Set(all.dropFirst(100).prefix(100)) == Set((0..<100).map { GQLChange.update($0) }))
        #expect(Set(all.dropFirst(200)) == Set(stride(from: 0, to: 100, by: 2).map { GQLChange.delete($0) }))
    }

    @Test func rolledBackWritesDeliverNothing() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, age: 50).insert(db)
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write { tx in
                try makeUser(2).insert(tx)
                #expect(try User.updateOne(tx, ["age": 51], key: 1))
                try makeUser(1).delete(tx)
                throw Abort()
            }
        }
        await #expect(throws: Abort.self) {
            try await db.write { tx in
                try makeUser(3).insert(tx)
                throw Abort()
            }
        }
        // A failing statement that is not caught rolls the whole transaction back too.
        let error = #expect(throws: GQLError.self) {
            try db.write { tx in
                try makeUser(4).insert(tx)
                try makeUser(1).insert(tx)  // duplicate key
            }
        }
        #expect(error?.code == .sqlite)
        await db.observersIdle()
        #expect(log.all == [])

        // Nothing of the rolled-back writes leaks into the next commit.
        try makeUser(5).insert(db)
        await db.observersIdle()
        #expect(log.all == [.insert(5)])
        #expect(try User.fetchAll(db, order: "userId").map(\.userId) == [1, 5])
    }

    @Test func failedStatementInsideACommittedTransactionDeliversNothingForItself() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        try await db.write { tx in
            try makeUser(2).insert(tx)
            // Rows 10 and 11 go in (their triggers fire), then 1 hits the primary key: SQLite undoes the statement.
            let error = #expect(throws: GQLError.self) {
                try tx.execute(
                    #"INSERT INTO "User" ("userId", "name") SELECT column1, 'x' FROM (VALUES (10), (11), (1), (12))"#)
            }
            #expect(error?.code == .sqlite)
            #expect(try User.check(tx, key: 10) == false)
            // An UPDATE that fails halfway is undone too.
            #expect(throws: GQLError.self) {
                try tx.execute(#"UPDATE "User" SET "userId" = CASE "userId" WHEN 2 THEN 20 ELSE 2 END"#)
            }
            try makeUser(3).insert(tx)
        }
        await db.observersIdle()

        #expect(log.all == [.insert(2), .insert(3)])
        #expect(try User.fetchAll(db, order: "userId").map(\.userId) == [1, 2, 3])
    }

    @Test func committedStatementsOfAFailingExecuteAreDeliveredAtOnce() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        // Outside a transaction each statement commits on its own: 20 is committed before 1 fails.
        let error = #expect(throws: GQLError.self) {
            try db.execute(#"INSERT INTO "User" ("userId") VALUES (20); INSERT INTO "User" ("userId") VALUES (1)"#)
        }
        #expect(error?.code == .sqlite)
        #expect(try User.check(db, key: 20))
        await db.observersIdle()
        #expect(log.all == [.insert(20)], "the committed insert of 20 was not delivered after its commit")

        // A later rolled-back write must neither drop it nor deliver it again.
        await #expect(throws: CancellationError.self) {
            try await db.write { tx in
                try makeUser(30).insert(tx)
                throw CancellationError()
            }
        }
        try makeUser(40).insert(db)
        await db.observersIdle()
        #expect(log.all == [.insert(20), .insert(40)])
    }

    @Test func writeWhoseTransactionSQLiteRolledBackCommitsNothingAfterIt() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, nil, log.callback)

        // OR ROLLBACK (like SQLITE_FULL or RAISE(ROLLBACK)) ends the whole transaction, not just the statement.
        let result = await #expect(throws: GQLError.self) {
            try await db.write { tx in
                try makeUser(2).insert(tx)
                _ = try? tx.execute(#"INSERT OR ROLLBACK INTO "User" ("userId") VALUES (1)"#)
                try makeUser(3).insert(tx)  // must not run outside the transaction, committing on its own
            }
        }
        #expect(result != nil)
        await db.observersIdle()

        // db.write threw, so none of its work may be in the file — and every committed row is reported.
        let rows = try User.fetchAll(db, order: "userId").map(\.userId)
        #expect(rows == [1], "db.write threw but left rows \(rows)")
        let reported = Set(log.keys.compactMap { $0.intValue.map(Int.init) })
        #expect(reported == Set(rows).subtracting([1]), "committed rows and delivered events differ")
    }

    @Test func observerCreatedInsideAWriteIsNotLeftDeadByItsRollback() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let log = ObservedChanges()
        struct Abort: Error {}

        // Created inside a write that commits: it works.
        let committedLog = ObservedChanges()
        try await db.write { _ in _ = try User.createObserver(db, [.insert], nil, committedLog.callback) }
        // Created inside a write that rolls back: the write's error reaches the caller, the observer stays
        // registered, and its triggers (rolled back with the write) are put back, so it hears later writes.
        await #expect(throws: Abort.self) {
            try await db.write { _ in
                _ = try User.createObserver(db, [.insert], nil, log.callback)
                throw Abort()
            }
        }
        #expect(db.observerCount == 2)
        try makeUser(5).insert(db)
        await db.observersIdle()

        #expect(committedLog.all == [.insert(5)])
        #expect(log.all == [.insert(5)], "an observer counted in observerCount never hears anything")
    }

    @Test func callbackMayWriteAgainAndHearsItsOwnChange() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        let failures = TestLocked<[String]>([])
        _ = try User.createObserver(db, [.insert], "OBJ.age > 40") { type, key in
            log.callback(type, key)
            guard let id = key.intValue, id < 1000 else { return }
            do {
                try makeUser(Int(id) + 1000, age: 60).insert(db)  // its own transaction
                try db.write { tx in try User.updateOne(tx, ["approved": true], key: id) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }

        try makeUser(1, age: 50).insert(db)
        try makeUser(2, age: 50).insert(db)
        await observersSettled(db)

        #expect(failures.withLock { $0 } == [])
        // The callbacks' writes race the test's second insert, so only causal order is fixed.
        let all = log.all
        #expect(all.count == 4)
        #expect(Set(all) == [.insert(1), .insert(2), .insert(1001), .insert(1002)])
        let position = { (change: GQLChange) in all.firstIndex(of: change) ?? -1 }
        #expect(position(.insert(1)) < position(.insert(1001)))
        #expect(position(.insert(2)) < position(.insert(1002)))
        #expect(position(.insert(1)) < position(.insert(2)))
        #expect(try User.fetchAll(db, "approved = 1", order: "userId").map(\.userId) == [1, 2])
    }

    @Test func removeObserverStopsDeliveriesAndDropsItsTriggers() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let removed = ObservedChanges(), kept = ObservedChanges()
        let id = try User.createObserver(db, .all, nil, removed.callback)
        let keptID = try User.createObserver(db, [.insert], nil, kept.callback)
        #expect(try await !observerTriggerNames(db).isEmpty)

        try makeUser(1).insert(db)
        await db.observersIdle()
        #expect(removed.all == [.insert(1)])

        User.removeObserver(db, id)
        #expect(db.observerCount == 1)
        try makeUser(2).insert(db)
        try makeUser(2, age: 70).update(db)
        try makeUser(1).delete(db)
        await db.observersIdle()
        #expect(removed.all == [.insert(1)])
        #expect(kept.all == [.insert(1), .insert(2)])

        // Unknown and repeated ids are ignored.
        User.removeObserver(db, id)
        User.removeObserver(db, "not-an-id")
        db.removeObserver("987654")
        #expect(db.observerCount == 1)

        // Without observers no trigger is left to slow writes down.
        db.removeObserver(keptID)
        #expect(db.observerCount == 0)
        #expect(try await observerTriggerNames(db) == [])
        try makeUser(3).insert(db)
        await db.observersIdle()
        #expect(kept.all == [.insert(1), .insert(2)])
    }

    @Test func observerRemovedByAnotherCallbackHearsNothingQueuedAfterIt() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let remover = ObservedChanges(), removed = ObservedChanges()
        let removedID = TestLocked<String?>(nil)
        _ = try User.createObserver(db, [.insert], nil) { type, key in
            remover.callback(type, key)
            if key == 1, let id = removedID.value { User.removeObserver(db, id) }
        }
        let id = try User.createObserver(db, [.insert], nil, removed.callback)
        removedID.withLock { $0 = id }
        #expect(db.observerCount == 2)

        // One commit: the events of rows 2 and 3 are queued after the remover's callback for row 1.
        try await db.write { tx in
            for id in 1...3 { try makeUser(id).insert(tx) }
        }
        try makeUser(4).insert(db)
        await db.observersIdle()

        #expect(remover.all == [.insert(1), .insert(2), .insert(3), .insert(4)])
        // One outcome only: ids grow, so each row's trigger calls the remover before the removed observer, and a
        // queued event is checked against its observer when it is delivered, after the remover's callback (and
        // its removeObserver) returned: not even row 1 reaches the removed observer.
        #expect(removed.all.isEmpty, "callbacks started after removeObserver returned: \(removed.all)")
        #expect(db.observerCount == 1)
    }

    @Test func observerRemovedFromItsOwnCallbackHearsNothingMore() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        let id = TestLocked<String?>(nil)
        let observer = try User.createObserver(db, [.insert], nil) { type, key in
            log.callback(type, key)
            if let id = id.withLock({ $0 }) { User.removeObserver(db, id) }
        }
        id.withLock { $0 = observer }

        try await db.write { tx in
            for user in 1...3 { try makeUser(user).insert(tx) }  // one commit, three events
        }
        try makeUser(4).insert(db)
        await db.observersIdle()

        #expect(log.all == [.insert(1)])
        #expect(db.observerCount == 0)
    }

    @Test func twentyObserversEachSeeExactlyTheirEvents() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let kinds: [GQLObserverType] = [.insert, .update, .delete, .all, [.insert, .delete]]
        var logs: [(types: GQLObserverType, age: Int, log: ObservedChanges)] = []
        for age in 0..<20 {
            let log = ObservedChanges()
            let types = kinds[age % kinds.count]
            _ = try User.createObserver(db, types, "OBJ.age = \(age)", log.callback)
            logs.append((types, age, log))
        }
        #expect(db.observerCount == 20)

        // Rows 0..<100, row k has age k % 20; every row updated (age unchanged); even rows deleted.
        try await db.write { tx in
            for id in 0..<100 { try makeUser(id, age: id % 20).insert(tx) }
        }
        #expect(try User.updateAll(db, ["approved": true]) == 100)
        #expect(try User.deleteAll(db, "userId % 2 = 0") == 50)
        await db.observersIdle()

        for (types, age, log) in logs {
            var expected: [GQLChange] = []
            let ids = (0..<100).filter { $0 % 20 == age }
            if types.contains(.insert) { expected += ids.map { .insert($0) } }
            if types.contains(.update) { expected += ids.map { .update($0) } }
            if types.contains(.delete) { expected += ids.filter { $0 % 2 == 0 }.map { .delete($0) } }
            #expect(log.all == expected, "observer of age \(age), \(types)")
        }
    }

    // MARK: Schema changes

    @Test func observersSurviveDropTableAndCreateTable() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let log = ObservedChanges()
        _ = try User.createObserver(db, .all, "OBJ.age > 40", log.callback)
        try makeUser(1, age: 50).insert(db)

        try db.dropTable("User")
        try db.createTable("User")
        #expect(try User.count(db) == 0)
        try makeUser(2, age: 50).insert(db)
        try makeUser(3, age: 10).insert(db)
        try makeUser(2, age: 60).update(db)
        try makeUser(2).delete(db)

        // Dropped, then created again on first use.
        try db.dropTable("User")
        try makeUser(4, age: 70).insert(db)
        await db.observersIdle()

        #expect(log.all == [.insert(1), .insert(2), .update(2), .delete(2), .insert(4)])
        #expect(db.observerCount == 1)
    }

    @Test func observersSurviveCleanupDatabaseAndRawDropTable() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let log = ObservedChanges()
        _ = try User.createObserver(db, [.insert, .delete], nil, log.callback)
        try makeUser(1).insert(db)

        try db.cleanupDatabase()  // drops and recreates without delete events
        #expect(try User.count(db) == 0)
        try makeUser(2).insert(db)

        try await db.execute(#"DROP TABLE "User""#)
        try makeUser(3).insert(db)  // the table comes back on first use, with its observers
        try makeUser(3).delete(db)
        await db.observersIdle()

        #expect(log.all == [.insert(1), .insert(2), .insert(3), .delete(3)])
    }

    // MARK: AsyncSequence

    @Test func asyncSequenceDeliversTheMatchingChanges() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let changes = User.observe(db, [.insert, .delete], "OBJ.age > 40")
        try makeUser(1, age: 30).insert(db)
        try makeUser(2, age: 50).insert(db)
        try makeUser(2, age: 51).update(db)
        try makeUser(1).delete(db)
        try makeUser(2).delete(db)

        var seen: [GQLChange] = []
        for try await change in changes {
            seen.append(change)
            if seen.count == 2 { break }
        }
        #expect(seen == [.insert(2), .delete(2)])
    }

    /// Observes inserts, runs `write`, and returns the first `count` changes; the sequence is local, so it is
    /// gone once this returns.
    private func firstInserts(
        _ db: GQLDatabase, count: Int, after write: () throws -> Void
    ) async throws -> [GQLChange] {
        let changes = User.observe(db, [.insert])
        #expect(db.observerCount == 1)
        try write()
        var seen: [GQLChange] = []
        for try await change in changes {
            seen.append(change)
            if seen.count == count { break }
        }
        return seen
    }

    @Test func finishedAndDroppedSequenceRemovesTheObserver() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let seen = try await firstInserts(db, count: 2) {
            for id in 1...3 { try makeUser(id).insert(db) }
        }
        #expect(seen == [.insert(1), .insert(2)])
        #expect(db.observerCount == 0)
        #expect(try await observerTriggerNames(db) == [])
    }

    @Test func breakingOutOfTheLoopRemovesTheObserver() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let changes = User.observe(db, [.insert])
        try makeUser(1).insert(db)
        for try await change in changes {
            #expect(change == .insert(1))
            break
        }
        // "removed when the iteration ends": the loop has ended although `changes` is still in scope.
        #expect(db.observerCount == 0)
        withExtendedLifetime(changes) {}
    }

    @Test func cancellingTheIteratingTaskRemovesTheObserver() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let changes = User.observe(db, [.insert])
        let first = AsyncStream<GQLChange>.makeStream()
        let task = Task {
            for try await change in changes { first.continuation.yield(change) }
        }
        try makeUser(1).insert(db)
        var iterator = first.stream.makeAsyncIterator()
        let firstChange = await iterator.next()
        #expect(firstChange == .insert(1))
        #expect(db.observerCount == 1)

        task.cancel()
        _ = await task.result
        #expect(db.observerCount == 0)
    }

    @Test func droppingAnUnusedSequenceRemovesTheObserver() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        do {
            let changes = User.observe(db, [.insert])
            #expect(db.observerCount == 1)
            _ = changes
        }
        #expect(db.observerCount == 0)
        try makeUser(1).insert(db)
        await db.observersIdle()
    }
}
