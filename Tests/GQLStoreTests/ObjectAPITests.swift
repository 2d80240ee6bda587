import Foundation
import GQLStore
import Testing

/// A type keyed by a string, to show that keys of any convertible type work.
private struct Tag: GQLObject, Equatable {
    var name = ""
    var uses = 0
    static func primaryKey() -> String { "name" }
}

private struct Rollback: Error, Equatable {}

private struct KeyOnly: GQLObject, Equatable {
    var id = ""
    static func primaryKey() -> String { "id" }
}

private struct Event: GQLObject, Equatable {
    var id = 0
    var at = Date(timeIntervalSince1970: 0)
    var payload = Data()
    var title = ""
    var tags: [String] = []
    var flag = false
    var ratio = 0.0
    var note: String? = nil
    var blob: Data? = nil
    static func primaryKey() -> String { "id" }
}

/// Inserts users 1...10 with ages 10, 20, ... 100; user `n` is named "U<n>" and approved when `n` is even.
private func seedTen(_ db: some GQLDatabaseContext) throws {
    for n in 1...10 {
        try makeUser(n, "U\(n)", age: n * 10, approved: n.isMultiple(of: 2)).insert(db)
    }
}

private func ids(_ users: [User]) -> [Int] { users.map(\.userId) }

@Suite struct ObjectAPITests {
    // MARK: insert / fetchOne(key:)

    @Test func insertThenFetchOneByKeyFromAVariable() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var user = makeUser(1001, "John Smith", age: 42, approved: true)
        user.nickname = "Johnny"
        try user.insert(db)
        let key = user.userId
        #expect(try User.fetchOne(db, key: key) == user)
        let key64: Int64 = 1001
        #expect(try User.fetchOne(db, key: key64) == user)
        #expect(try User.fetchOne(db, key: 1002) == nil)
        #expect(try User.count(db) == 1)
    }

    @Test func stringKeysWork() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let name = "swift"
        try Tag(name: name, uses: 3).insert(db)
        try Tag(name: "sqlite", uses: 1).insert(db)
        #expect(try Tag.fetchOne(db, key: name) == Tag(name: "swift", uses: 3))
        #expect(try Tag.check(db, key: "sqlite"))
        #expect(try Tag.check(db, key: "graphql") == false)
        #expect(try Tag.updateOne(db, ["uses": 4], key: name))
        #expect(try Tag.fetchOne(db, key: "swift")?.uses == 4)
        #expect(try Tag.deleteOne(db, key: "sqlite"))
        #expect(try Tag.fetchAll(db) == [Tag(name: "swift", uses: 4)])
    }

    // MARK: update

    @Test func updateWritesEveryColumnOfTheRow() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var user = makeUser(1, "Ann", age: 20)
        user.nickname = "annie"
        try user.insert(db)
        try makeUser(2, "Bob", age: 30).insert(db)

        user.name = "Anne"
        user.age = 21
        user.approved = true
        user.nickname = nil
        try user.update(db)

        #expect(try User.fetchOne(db, key: 1) == user)
        #expect(try User.fetchOne(db, key: 2) == makeUser(2, "Bob", age: 30))
        #expect(try User.count(db) == 2)
    }

    @Test func updateOfAMissingRowThrowsNotFoundAndWritesNothing() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let error = try #require(throws: GQLError.self) { try makeUser(2, "Ghost").update(db) }
        #expect(error.code == .notFound)
        #expect(error.table == "User")
        #expect(error.message.contains("userId"))
        #expect(try User.check(db, key: 2) == false)
        #expect(try User.count(db) == 1)
    }

    // MARK: insertUpdate / updateInsert

    @Test func insertUpdateInsertsThenReplaces() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var user = makeUser(7, "Seven", age: 70)
        user.nickname = "sev"
        try user.insertUpdate(db)
        #expect(try User.fetchOne(db, key: 7) == user)

        user.age = 71
        user.name = "Seven II"
        user.nickname = nil
        try user.insertUpdate(db)
        #expect(try User.fetchOne(db, key: 7) == user)
        #expect(try User.count(db) == 1)
    }

    @Test func updateInsertUpdatesThenInserts() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, "One", age: 10).insert(db)
        var existing = makeUser(1, "Uno", age: 11, approved: true)
        existing.nickname = "u"
        try existing.updateInsert(db)
        let fresh = makeUser(2, "Two", age: 20)
        try fresh.updateInsert(db)
        #expect(try User.fetchAll(db, order: "userId") == [existing, fresh])
    }

    @Test func insertUpdateOfATypeWithOnlyAKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try KeyOnly(id: "a").insertUpdate(db)
        try KeyOnly(id: "a").insertUpdate(db)
        try KeyOnly(id: "b").updateInsert(db)
        #expect(try KeyOnly.fetchAll(db, order: "id") == [KeyOnly(id: "a"), KeyOnly(id: "b")])
        try KeyOnly(id: "a").update(db)
        #expect(throws: GQLError.self) { try KeyOnly(id: "c").update(db) }
        #expect(try KeyOnly.count(db) == 2)
    }

    // MARK: delete

    @Test func deleteRemovesTheRowAndReportsWhetherItExisted() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let user = makeUser(1)
        try user.insert(db)
        try makeUser(2).insert(db)
        #expect(try user.delete(db))
        #expect(try user.delete(db) == false)
        #expect(try User.fetchOne(db, key: 1) == nil)
        #expect(ids(try User.fetchAll(db)) == [2])
    }

    // MARK: fetchOne(condition:)

    @Test func fetchOneWithConditionArgumentsAndOrder() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let minimum = 35
        #expect(try User.fetchOne(db, "age > ?", [minimum], order: "age ASC")?.userId == 4)
        #expect(try User.fetchOne(db, "age > ?", [minimum], order: "age DESC")?.userId == 10)
        #expect(try User.fetchOne(db, "approved = ?", [true], order: "age DESC")?.userId == 10)
        #expect(try User.fetchOne(db, "approved = ? AND age < ?", [false, 45], order: "age DESC")?.userId == 3)
        #expect(try User.fetchOne(db, "name = :name", [":name": "U3"])?.age == 30)
        #expect(try User.fetchOne(db, order: "age DESC")?.userId == 10)
        #expect(try User.fetchOne(db, "age > 1000") == nil)
        #expect(try User.fetchOne(db) != nil)
    }

    // MARK: fetchAll arguments

    @Test func fetchAllWithPositionalArgumentsFromVariables() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let minAge = 30
        let maxAge: Int64 = 60
        let users = try User.fetchAll(db, "age >= ? AND age <= ?", [minAge, maxAge], order: "age")
        #expect(ids(users) == [3, 4, 5, 6])
        let name = "U5"
        #expect(ids(try User.fetchAll(db, "name = ?", [name])) == [5])
        let approved = true
        #expect(ids(try User.fetchAll(db, "approved = ? AND age < ?", [approved, 50], order: "userId")) == [2, 4])
        let optionalAge: Int? = 20
        #expect(ids(try User.fetchAll(db, "age = ?", [optionalAge])) == [2])
    }

    @Test func fetchAllWithNamedArgumentsFromVariables() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let min = 18
        let max = 99
        let users = try User.fetchAll(
            db, "age >= :min AND age <= :max", [":min": min, ":max": max], order: "age DESC", limit: 5, offset: 1)
        #expect(ids(users) == [8, 7, 6, 5, 4])
        // Keys may leave out the prefix, and @name / $name parameters work too.
        #expect(ids(try User.fetchAll(db, "age < :limit", ["limit": 25], order: "age")) == [1, 2])
        #expect(ids(try User.fetchAll(db, "age = @a OR age = $b", ["@a": 10, "$b": 100], order: "age")) == [1, 10])
        // A parameter used twice binds once.
        #expect(ids(try User.fetchAll(db, "age > :v AND userId > :v / 10", [":v": 80], order: "age")) == [9, 10])
    }

    @Test func fetchAllWithNumberedParameters() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(ids(try User.fetchAll(db, "age <= ?2 AND age >= ?1", [30, 50], order: "age")) == [3, 4, 5])
    }

    @Test func dateAndDataArgumentsMatchTheStoredForm() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for n in 0..<5 {
            try Event(id: n, at: start.addingTimeInterval(Double(n) * 3600), payload: Data([UInt8(n), 0])).insert(db)
        }
        let from = start.addingTimeInterval(3600)
        let to = start.addingTimeInterval(3 * 3600)
        #expect(try Event.fetchAll(db, "at >= ? AND at <= ?", [from, to], order: "at").map(\.id) == [1, 2, 3])
        #expect(try Event.fetchAll(db, "at > :t", [":t": to]).map(\.id) == [4])
        #expect(try Event.fetchOne(db, "payload = ?", [Data([2, 0])])?.id == 2)
        #expect(try Event.updateAll(db, ["at": start], "at > ?", [to]) == 1)
        #expect(try Event.fetchOne(db, key: 4)?.at == start)
    }

    /// SET values reach the row exactly as insert would store them: empty blobs stay blobs, text keeps NULs.
    @Test func updateAllAndUpdateOneStoreEveryKindOfValueExactly() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var event = Event(id: 1, payload: Data([9]), title: "t", note: "n", blob: Data([1]))
        try event.insert(db)
        try Event(id: 2).insert(db)
        let when = Date(timeIntervalSince1970: 1_700_000_000.5)
        let values: [String: any GQLValueConvertible] = [
            "at": when, "payload": Data(), "title": "a\u{0}b", "tags": ["x", "y"], "flag": true, "ratio": 2.5,
            "note": GQLNull, "blob": Data([0, 0]),
        ]
        #expect(try Event.updateAll(db, values, "id = ?", [1]) == 1)
        event = Event(
            id: 1, at: when, payload: Data(), title: "a\u{0}b", tags: ["x", "y"], flag: true, ratio: 2.5, note: nil,
            blob: Data([0, 0]))
        #expect(try Event.fetchOne(db, key: 1) == event)
        #expect(try Event.updateOne(db, ["title": "", "blob": Data(), "note": "n\u{0}"], key: 2))
        #expect(try Event.fetchOne(db, key: 2) == Event(id: 2, title: "", note: "n\u{0}", blob: Data()))
        let raw = try db.fetchAll(
            sql: "SELECT typeof(payload) AS p, length(payload) AS pl, typeof(blob) AS b FROM Event ORDER BY id")
        #expect(raw == [["p": "blob", "pl": 0, "b": "blob"], ["p": "blob", "pl": 0, "b": "blob"]])
    }

    /// Conditions are SQL the app writes; a trailing `--` comment must not swallow ORDER BY, LIMIT or OFFSET.
    @Test func aConditionEndingInACommentKeepsOrderLimitAndOffset() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(ids(try User.fetchAll(db, "age > 40 -- the older ones", order: "age DESC", limit: 2)) == [10, 9])
        #expect(ids(try User.fetchAll(db, "age > ? -- older", [40], order: "age", offset: 4)) == [9, 10])
        #expect(try User.fetchOne(db, "approved = 1 -- approved", order: "age DESC")?.userId == 10)
    }

    @Test func aBlankConditionMeansEveryRow() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(try User.count(db, "") == 10)
        #expect(try User.count(db, "  \n ") == 10)
        #expect(try User.fetchAll(db, " ", order: "age").count == 10)
        #expect(try User.updateAll(db, ["nickname": "x"], "") == 10)
    }

    // MARK: order / limit / offset

    @Test func orderLimitAndOffset() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(ids(try User.fetchAll(db, order: "age DESC")) == Array((1...10).reversed()))
        #expect(ids(try User.fetchAll(db, order: "age DESC", limit: 3)) == [10, 9, 8])
        #expect(ids(try User.fetchAll(db, order: "age DESC", limit: 3, offset: 2)) == [8, 7, 6])
        #expect(ids(try User.fetchAll(db, order: "approved DESC, age ASC", limit: 4)) == [2, 4, 6, 8])
        #expect(try User.fetchAll(db, limit: 0).isEmpty)
        #expect(try User.fetchAll(db, order: "age", offset: 20).isEmpty)
        #expect(try User.fetchAll(db, "age > ?", [45], order: "age", limit: 2, offset: 1).map(\.age) == [60, 70])
    }

    @Test func offsetWithoutLimitSkipsAndReturnsTheRest() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(ids(try User.fetchAll(db, order: "age", offset: 7)) == [8, 9, 10])
        #expect(ids(try User.fetchAll(db, "approved = ?", [true], order: "age", offset: 3)) == [8, 10])
    }

    // MARK: updateAll / updateOne

    @Test func updateAllChangesOnlyMatchingRowsAndCountsThem() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let newName = "Thirties"
        let low = 30
        let high = 40
        let changed = try User.updateAll(db, ["name": newName, "nickname": "x"], "age >= ? AND age <= ?", [low, high])
        #expect(changed == 2)
        #expect(ids(try User.fetchAll(db, "name = ?", [newName], order: "userId")) == [3, 4])
        #expect(try User.fetchOne(db, key: 3)?.nickname == "x")
        #expect(try User.fetchOne(db, key: 5)?.name == "U5")
        #expect(try User.count(db, "nickname IS NULL") == 8)
    }

    @Test func updateAllWithNamedArgumentsAndWithoutCondition() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(
            try User.updateAll(db, ["approved": true], "age >= :min AND age <= :max", [":min": 50, ":max": 70]) == 3)
        #expect(ids(try User.fetchAll(db, "approved = ?", [true], order: "userId")) == [2, 4, 5, 6, 7, 8, 10])
        let nothing: String? = nil
        #expect(try User.updateAll(db, ["nickname": "all", "age": 1]) == 10)
        #expect(try User.count(db, "nickname = 'all' AND age = 1") == 10)
        #expect(try User.updateAll(db, ["nickname": nothing]) == 10)
        #expect(try User.count(db, "nickname IS NULL") == 10)
        #expect(try User.updateAll(db, ["age": 5], "age > ?", [1000]) == 0)
    }

    /// The condition's `?NNN` parameters count from its own first argument, as they do in `fetchAll`.
    @Test func updateAllWithNumberedParametersInTheCondition() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let changed = try User.updateAll(db, ["nickname": "mid"], "age >= ?1 AND age <= ?2", [30, 50])
        #expect(changed == 3)
        #expect(ids(try User.fetchAll(db, "nickname = 'mid'", order: "userId")) == [3, 4, 5])
    }

    @Test func updateOneChangesOneRowByKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let key = 4
        let newAge = 44
        #expect(try User.updateOne(db, ["age": newAge, "approved": false], key: key))
        #expect(try User.fetchOne(db, key: 4) == makeUser(4, "U4", age: 44, approved: false))
        #expect(try User.fetchOne(db, key: 5) == makeUser(5, "U5", age: 50))
        #expect(try User.updateOne(db, ["age": 1], key: 99) == false)
        #expect(try User.count(db, "age = 1") == 0)
    }

    @Test func updateAllWithAnUnknownColumnIsRejected() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let error = try #require(throws: GQLError.self) { try User.updateAll(db, ["shoeSize": 44]) }
        #expect(error.code == .invalidArgument)
        #expect(error.column == "shoeSize")
        let empty = try #require(throws: GQLError.self) { try User.updateAll(db, [:]) }
        #expect(empty.code == .invalidArgument)
    }

    // MARK: deleteAll / deleteOne

    @Test func deleteAllWithAndWithoutCondition() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        #expect(try User.deleteAll(db, "age >= ? AND age <= ?", [30, 35]) == 1)
        #expect(try User.deleteAll(db, "age >= :min", [":min": 90]) == 2)
        #expect(ids(try User.fetchAll(db, order: "userId")) == [1, 2, 4, 5, 6, 7, 8])
        #expect(try User.deleteAll(db, "age > 1000") == 0)
        #expect(try User.deleteAll(db) == 7)
        #expect(try User.count(db) == 0)
    }

    @Test func deleteOneByKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let key = 3
        #expect(try User.deleteOne(db, key: key))
        #expect(try User.deleteOne(db, key: key) == false)
        #expect(try User.check(db, key: 3) == false)
        #expect(try User.count(db) == 9)
    }

    // MARK: count / check

    @Test func countWithAndWithoutCondition() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(try User.count(db) == 0)
        try seedTen(db)
        #expect(try User.count(db) == 10)
        #expect(try User.count(db, "age > 40") == 6)
        #expect(try User.count(db, "age > ?", [40]) == 6)
        #expect(try User.count(db, "approved = :a", [":a": true]) == 5)
        #expect(try User.count(db, "age > 1000") == 0)
    }

    @Test func checkWithKeyConditionAndNothing() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(try User.check(db) == false)
        try seedTen(db)
        #expect(try User.check(db))
        let key = 10
        #expect(try User.check(db, key: key))
        #expect(try User.check(db, key: 11) == false)
        #expect(try User.check(db, "age = ?", [100]))
        #expect(try User.check(db, "age = ?", [101]) == false)
        #expect(try User.check(db, "name = :n", [":n": "U1"]))
    }

    // MARK: values()

    @Test func valuesGivesTheDictionaryTheStoreUses() throws {
        var user = makeUser(1001, "John Smith", age: 42, approved: true)
        #expect(
            try user.values()
                == ["userId": 1001, "name": "John Smith", "age": 42, "approved": true, "nickname": .null])
        user.nickname = "JS"
        #expect(try user.values()["nickname"] == "JS")

        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        try db.insert("User", try user.values())
        #expect(try User.fetchOne(db, key: 1001) == user)
        #expect(try db.fetchOne("User", key: 1001) == (try user.values()))
    }

    // MARK: Transactions

    @Test func writeGroupsVerbsAndSeesItsOwnWrites() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(100, "Old", age: 99).insert(db)
        let result = try db.write { tx -> Int in
            try seedTen(tx)
            var one = try #require(try User.fetchOne(tx, key: 1))
            one.nickname = "first"
            try one.update(tx)
            try makeUser(11, "Eleven", age: 110).insertUpdate(tx)
            try makeUser(12, "Twelve", age: 120).updateInsert(tx)
            try User.updateAll(tx, ["approved": true], "age > ?", [100])
            try User.updateOne(tx, ["name": "Older"], key: 100)
            try User.deleteAll(tx, "age BETWEEN ? AND ?", [20, 30])
            try User.deleteOne(tx, key: 4)
            #expect(try makeUser(5).delete(tx))
            #expect(try User.fetchOne(tx, key: 1)?.nickname == "first")
            #expect(try User.check(tx, key: 4) == false)
            #expect(try User.fetchOne(tx, "name = ?", ["Older"])?.userId == 100)
            return try User.count(tx)
        }
        // 1 + 10 + 2 inserted, 2 + 1 + 1 deleted.
        #expect(result == 9)
        #expect(ids(try User.fetchAll(db, order: "userId")) == [1, 6, 7, 8, 9, 10, 11, 12, 100])
        #expect(try User.fetchOne(db, key: 1)?.nickname == "first")
        #expect(try User.count(db, "approved = 1 AND age > 100") == 2)
        #expect(try User.fetchOne(db, key: 100)?.name == "Older")
    }

    @Test func writeThatThrowsKeepsNothing() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let error = try #require(throws: Rollback.self) {
            try db.write { tx in
                try makeUser(11).insert(tx)
                try User.updateAll(tx, ["name": "changed"])
                try User.deleteOne(tx, key: 1)
                try makeUser(2, "Replaced", age: 1).insertUpdate(tx)
                #expect(try User.count(tx) == 10)
                throw Rollback()
            }
        }
        #expect(error == Rollback())
        #expect(try User.count(db) == 10)
        #expect(try User.check(db, key: 11) == false)
        #expect(try User.fetchOne(db, key: 1) == makeUser(1, "U1", age: 10))
        #expect(try User.fetchOne(db, key: 2) == makeUser(2, "U2", age: 20, approved: true))
        #expect(try User.count(db, "name = 'changed'") == 0)
    }

    @Test func writeThatFailsOnAVerbKeepsNothing() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let error = try #require(throws: GQLError.self) {
            try db.write { tx in
                try makeUser(2).insert(tx)
                try makeUser(1).insert(tx)  // duplicate key
            }
        }
        #expect(error.code == .sqlite)
        #expect(ids(try User.fetchAll(db)) == [1])
    }

    @Test func aCaughtStatementFailureInsideWriteKeepsTheRest() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        try db.write { tx in
            try makeUser(2).insert(tx)
            #expect(throws: GQLError.self) { try makeUser(1).insert(tx) }
            try makeUser(3).insert(tx)
        }
        #expect(ids(try User.fetchAll(db, order: "userId")) == [1, 2, 3])
    }

    @Test func aTableFirstCreatedInARolledBackWriteIsCreatedAgainLater() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(throws: Rollback.self) {
            try db.write { tx in
                try makeUser(1).insert(tx)
                throw Rollback()
            }
        }
        #expect(try User.count(db) == 0)
        try makeUser(2).insert(db)
        #expect(ids(try User.fetchAll(db)) == [2])
    }

    @Test func everyReadSeesTheWritesThatReturnedBeforeIt() throws {
        let temp = try TempDatabase()
        let db = temp.db
        for n in 1...200 {
            try makeUser(n, age: n).insert(db)
            #expect(try User.fetchOne(db, key: n)?.age == n)
            #expect(try User.count(db) == n)
            try User.updateOne(db, ["age": n + 1000], key: n)
            #expect(try User.fetchOne(db, key: n)?.age == n + 1000)
            if n.isMultiple(of: 3) {
                try User.deleteOne(db, key: n)
                #expect(try User.check(db, key: n) == false)
                try makeUser(n, age: n).insert(db)
            }
        }
        #expect(try User.count(db, "age > 1000") == 200 - 66)
    }

    @Test func readsFromOtherTasksSeeWritesThatReturned() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        for n in 1...50 {
            try await db.write { tx in try makeUser(n, age: n).insert(tx) }
            let (found, count) = try await Task.detached {
                (try User.fetchOne(db, key: n), try User.count(db))
            }.value
            #expect(found?.age == n)
            #expect(count == n)
        }
    }

    @Test func readSeesOneSnapshot() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        let (before, during, names) = try db.read { tx in
            let before = try User.count(tx)
            // Another write commits while the read transaction is open.
            try makeUser(11).insert(db)
            try User.updateAll(db, ["name": "renamed"])
            let during = try User.count(tx)
            let names = Set(try User.fetchAll(tx).map(\.name))
            return (before, during, names)
        }
        #expect(before == 10)
        #expect(during == 10)
        #expect(!names.contains("renamed"))
        #expect(try User.count(db) == 11)
        #expect(try User.count(db, "name = 'renamed'") == 11)
    }

    /// A read that uses `db` instead of its `tx` shares the reader its own caller holds, instead of waiting
    /// forever for a second one from an exhausted pool.
    @Test func aReadInsideAReadWithOneReaderDoesNotDeadlock() throws {
        var configuration = GQLDatabase.Configuration()
        configuration.maximumReaders = 1
        let temp = try TempDatabase(configuration: configuration)
        let db = temp.db
        try makeUser(1).insert(db)
        let count = try db.read { _ in try User.count(db) }
        #expect(count == 1)
        // Nested reads from several threads at once, each holding the only reader in turn.
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let nested = try db.read { _ in try db.read { _ in try User.count(db) } }
                if nested != 1 { failures.record("nested read counted \(nested)") }
            } catch {
                failures.record("\(error)")
            }
        }
        #expect(failures.all.isEmpty)
    }

    @Test func asyncWriteAndRead() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        let user = makeUser(1, "Async", age: 33)
        let count = try await db.write { tx -> Int in
            try user.insert(tx)
            try makeUser(2).insert(tx)
            return try User.count(tx)
        }
        #expect(count == 2)
        let fetched = try await db.read { tx in try User.fetchOne(tx, key: 1) }
        #expect(fetched == user)
        await #expect(throws: Rollback.self) {
            try await db.write { tx in
                try makeUser(3).insert(tx)
                throw Rollback()
            }
        }
        #expect(try User.count(db) == 2)
        let deleted = try await db.execute("DELETE FROM User WHERE userId = ?", [2])
        #expect(deleted == 1)
        #expect(ids(try User.fetchAll(db)) == [1])
    }

    @Test func manyConcurrentAsyncWritesAllLand() async throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 1...40 {
                group.addTask {
                    try await db.write { tx in
                        try makeUser(n, age: n).insert(tx)
                        try User.updateOne(tx, ["nickname": "n\(n)"], key: n)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try User.count(db) == 40)
        #expect(try User.count(db, "nickname = 'n' || userId") == 40)
    }

    // MARK: many rows, and a bad row among them

    @Test func fetchAllDecodesManyRowsInOrderAndNoneFromAnEmptyResult() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(try User.fetchAll(db).isEmpty)
        try db.write { tx in
            for n in 1...1_000 { try makeUser(n, "U\(n)", age: n % 90).insert(tx) }
        }
        let all = try User.fetchAll(db, order: "userId")
        #expect(all.count == 1_000)
        #expect(ids(all) == Array(1...1_000))
        #expect(all[499].name == "U500")
        #expect(try User.fetchAll(db, "age = ?", [1000]).isEmpty)
    }

    @Test func aBadRowInTheMiddleOfAFetchThrowsAndTheNextFetchWorks() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedTen(db)
        try db.execute(#"UPDATE "User" SET "age" = 'old' WHERE "userId" = 5"#)
        let error = try #require(throws: GQLError.self) { try User.fetchAll(db, order: "userId") }
        #expect(error.code == .decoding)
        #expect(error.column == "age")
        try db.execute(#"UPDATE "User" SET "age" = 50 WHERE "userId" = 5"#)
        #expect(try ids(User.fetchAll(db, order: "userId")) == Array(1...10))
    }
}
