import Foundation
import GQLStore
import Testing

private struct Measurement: GQLObject, Equatable {
    var id = 0
    var value = 0.0
    var ratio: Float = 0
    var samples: [Double] = []
    var extra: GQLValue = .null
    static func primaryKey() -> String { "id" }
}

private struct Counter: GQLObject, Equatable {
    var id = 0
    var total: UInt64 = 0
    static func primaryKey() -> String { "id" }
}

private struct Profile: Codable, Equatable, Sendable {
    var city = ""
}

private enum Level: String, Codable, Sendable { case low, high }

/// Columns of several kinds, to corrupt one at a time with raw SQL.
private struct Typed: GQLObject, Equatable {
    var id = 0
    var count = 0
    var small: Int8 = 0
    var flag = false
    var label = ""
    var when = Date(timeIntervalSince1970: 0)
    var profile = Profile()
    var level = Level.low
    var optionalCount: Int? = nil
    static func primaryKey() -> String { "id" }
}

/// Its table is made with raw SQL first, without NOT NULL, so NULL can reach non-optional properties.
private struct Loose: GQLObject, Equatable {
    var id = 0
    var name = ""
    var age = 0
    static func primaryKey() -> String { "id" }
}

private struct WrongKey: GQLObject {
    var id = 0
    var name = ""
    static func primaryKey() -> String { "identifier" }
}

@Suite struct ErrorTests {
    // MARK: Bad SQL in conditions

    @Test func badSQLInAConditionIsAnSQLiteErrorWithTheSQLAndSQLitesMessage() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)

        let unknownColumn = try #require(throws: GQLError.self) { try User.fetchAll(db, "agee > ?", [3]) }
        #expect(unknownColumn.code == .sqlite)
        #expect(unknownColumn.sql?.contains("agee > ?") == true)
        #expect(unknownColumn.message.contains("no such column: agee"))
        #expect(unknownColumn.sqliteCode == 1)

        let syntax = try #require(throws: GQLError.self) { try User.count(db, "age = = 3") }
        #expect(syntax.code == .sqlite)
        #expect(syntax.sql?.contains("age = = 3") == true)
        #expect(syntax.message.contains("syntax error"))

        let inDelete = try #require(throws: GQLError.self) { try User.deleteAll(db, "nope(1)") }
        #expect(inDelete.code == .sqlite)
        #expect(inDelete.sql?.contains("nope(1)") == true)
        #expect(inDelete.message.contains("no such function: nope"))

        let inUpdate = try #require(throws: GQLError.self) { try User.updateAll(db, ["age": 1], "age = = 1") }
        #expect(inUpdate.code == .sqlite)
        #expect(inUpdate.sql?.hasPrefix("UPDATE") == true)
        #expect(inUpdate.sql?.contains("age = = 1") == true)
        #expect(inUpdate.message.contains("syntax error"))

        let inOrder = try #require(throws: GQLError.self) { try User.fetchAll(db, order: "shoeSize") }
        #expect(inOrder.code == .sqlite)
        #expect(inOrder.sql?.contains("ORDER BY shoeSize") == true)

        let inDictionary = try #require(throws: GQLError.self) { try db.fetchAll("User", "agee > 1") }
        #expect(inDictionary.code == .sqlite)
        #expect(inDictionary.sql?.contains("agee > 1") == true)

        let inRawSQL = try #require(throws: GQLError.self) { try db.execute("DELETE FROM Nowhere") }
        #expect(inRawSQL.code == .sqlite)
        #expect(inRawSQL.message.contains("no such table: Nowhere"))

        // Nothing was changed, and the database keeps working.
        #expect(try User.fetchAll(db) == [makeUser(1)])
    }

    @Test func twoStatementsInAConditionAreRejected() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let attempts: [() throws -> Void] = [
            { _ = try User.fetchAll(db, "1 = 1; DROP TABLE User") },
            { _ = try User.fetchOne(db, "1; DELETE FROM User") },
            { _ = try User.count(db, "1; DROP TABLE User") },
            { _ = try User.check(db, "1; DROP TABLE User") },
            { _ = try User.deleteAll(db, "userId = 2; DROP TABLE User") },
            { _ = try User.updateAll(db, ["age": 1], "1; DROP TABLE User") },
            { _ = try db.fetchAll("User", "1; DROP TABLE User") },
            { _ = try db.deleteAll("User", "0; DELETE FROM User") },
            { _ = try db.fetchAll(sql: "SELECT 1; DROP TABLE User") },
            { _ = try User.fetchAll(db, "1 = 1) ; DROP TABLE User --") },
            { _ = try User.deleteAll(db, "0) ; DROP TABLE User; SELECT (1") },
        ]
        for attempt in attempts {
            // Refused before anything runs: as a second statement, or as a syntax error in the condition.
            let error = try #require(throws: GQLError.self) { try attempt() }
            #expect(error.code == .invalidArgument || error.code == .sqlite, "\(error)")
            #expect(error.sql?.contains("DROP TABLE User") == true || error.sql?.contains("DELETE FROM User") == true)
        }
        #expect(try db.tableNames().contains("User"))
        #expect(try User.count(db) == 1)
    }

    // MARK: Constraint and missing rows

    @Test func insertingADuplicateKeyIsAConstraintError() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, "First").insert(db)
        let error = try #require(throws: GQLError.self) { try makeUser(1, "Second").insert(db) }
        #expect(error.code == .sqlite)
        #expect(error.sqliteCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        #expect(error.sqliteCode.map { $0 & 0xFF } == 19)  // SQLITE_CONSTRAINT
        #expect(error.message.contains("UNIQUE constraint failed: User.userId"))
        #expect(error.table == "User")
        #expect(error.sql?.hasPrefix("INSERT") == true)

        let viaDictionary = try #require(throws: GQLError.self) { try db.insert("User", ["userId": 1]) }
        #expect(viaDictionary.code == .sqlite)
        #expect(viaDictionary.sqliteCode == 1555)
        #expect(try User.fetchAll(db) == [makeUser(1, "First")])
    }

    @Test func updatingAMissingRowIsNotFound() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let object = try #require(throws: GQLError.self) { try makeUser(2).update(db) }
        #expect(object.code == .notFound)
        #expect(object.table == "User")
        #expect(object.operation == "update")
        let dictionary = try #require(throws: GQLError.self) { try db.update("User", ["userId": 2, "age": 3]) }
        #expect(dictionary.code == .notFound)
        // Matching the code works as documented.
        var matched = false
        do {
            try makeUser(3).update(db)
        } catch GQLError.Code.notFound {
            matched = true
        }
        #expect(matched)
        #expect(try User.count(db) == 1)
    }

    // MARK: Decoding

    @Test func textInAnIntColumnIsADecodingErrorNamingColumnAndType() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        try db.execute("INSERT INTO User (userId, name, age, approved) VALUES (1, 'x', 'abc', 0)")
        let error = try #require(throws: GQLError.self) { try User.fetchOne(db, key: 1) }
        #expect(error.code == .decoding)
        #expect(error.column == "age")
        #expect(error.table == "User")
        #expect(error.message.contains("'age'"))
        #expect(error.message.contains("Int"))
        #expect(error.message.contains("abc"))
        let viaFetchAll = try #require(throws: GQLError.self) { try User.fetchAll(db) }
        #expect(viaFetchAll.code == .decoding)
        #expect(viaFetchAll.column == "age")
        // The dictionary API hands the stored value out as it is.
        #expect(try db.fetchOne("User", key: 1)?["age"] == "abc")
    }

    @Test func everyKindOfMismatchNamesItsColumn() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Typed.self)
        let cases: [(column: String, sql: String, type: String)] = [
            ("count", "count = 1.5", "Int"),
            ("small", "small = 300", "Int8"),
            ("flag", "flag = 'yes'", "Bool"),
            ("label", "label = X'00'", "String"),
            ("when", "\"when\" = 'yesterday'", "Date"),
            ("profile", "profile = '{not json'", "Profile"),
            ("level", "level = 'medium'", "Level"),
            ("optionalCount", "optionalCount = 'many'", "Int"),
        ]
        for (n, item) in cases.enumerated() {
            try Typed(id: n).insert(db)
            try db.execute("UPDATE Typed SET \(item.sql) WHERE id = ?", [n])
            let error = try #require(throws: GQLError.self, "\(item.column)") { try Typed.fetchOne(db, key: n) }
            #expect(error.code == .decoding, "\(item.column)")
            #expect(error.column == item.column)
            #expect(error.message.contains(item.type), "\(error.message)")
            try Typed.deleteOne(db, key: n)
        }
    }

    @Test func nullInANonOptionalColumnIsADecodingError() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.execute("CREATE TABLE Loose (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
        try db.register(Loose.self)
        try db.execute("INSERT INTO Loose (id, name, age) VALUES (1, NULL, 5), (2, 'two', NULL)")
        let name = try #require(throws: GQLError.self) { try Loose.fetchOne(db, key: 1) }
        #expect(name.code == .decoding)
        #expect(name.column == "name")
        #expect(name.message.contains("NULL"))
        #expect(name.message.contains("String"))
        let age = try #require(throws: GQLError.self) { try Loose.fetchOne(db, key: 2) }
        #expect(age.code == .decoding)
        #expect(age.column == "age")
        #expect(age.message.contains("NULL"))
    }

    // MARK: Values that cannot be stored

    @Test func nanAndInfinityAreInvalidValues() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try Measurement(id: 1, value: 1).insert(db)
        let bad: [Double] = [.nan, .infinity, -.infinity]
        for number in bad {
            let insert = try #require(throws: GQLError.self) { try Measurement(id: 2, value: number).insert(db) }
            #expect(insert.code == .invalidValue, "\(number)")
            let update = try #require(throws: GQLError.self) { try Measurement(id: 1, value: number).update(db) }
            #expect(update.code == .invalidValue)
            let upsert = try #require(throws: GQLError.self) { try Measurement(id: 1, value: number).insertUpdate(db) }
            #expect(upsert.code == .invalidValue)
            let float = try #require(throws: GQLError.self) { try Measurement(id: 2, ratio: Float(number)).insert(db) }
            #expect(float.code == .invalidValue)
            let updateAll = try #require(throws: GQLError.self) { try Measurement.updateAll(db, ["value": number]) }
            #expect(updateAll.code == .invalidValue)
            let argument = try #require(throws: GQLError.self) { try Measurement.fetchAll(db, "value < ?", [number]) }
            #expect(argument.code == .invalidValue)
            let dictionary = try #require(throws: GQLError.self) {
                try db.insert("Measurement", ["id": 3, "value": number])
            }
            #expect(dictionary.code == .invalidValue)
            let json = try #require(throws: GQLError.self) {
                try Measurement(id: 4, extra: ["x": .double(number)]).insert(db)
            }
            #expect(json.code == .invalidValue)
        }
        #expect(try Measurement.fetchAll(db) == [Measurement(id: 1, value: 1)])
    }

    @Test func nanInsideAnArrayPropertyIsAnInvalidValue() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let error = try #require(throws: GQLError.self) { try Measurement(id: 1, samples: [1, .nan]).insert(db) }
        #expect(error.code == .invalidValue)
        #expect(try Measurement.count(db) == 0)
    }

    @Test func aUInt64AboveInt64MaxIsAnInvalidValue() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try Counter(id: 1, total: UInt64(Int64.max)).insert(db)
        #expect(try Counter.fetchOne(db, key: 1)?.total == UInt64(Int64.max))
        let error = try #require(throws: GQLError.self) { try Counter(id: 2, total: .max).insert(db) }
        #expect(error.code == .invalidValue)
        #expect(error.column == "total")
        #expect(try Counter.count(db) == 1)
    }

    // MARK: Arguments

    @Test func wrongNumberOfPositionalArgumentsIsInvalidArgument() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, age: 40).insert(db)
        let attempts: [() throws -> Void] = [
            { _ = try User.fetchAll(db, "age > ?") },
            { _ = try User.fetchAll(db, "age > ?", [1, 2]) },
            { _ = try User.fetchAll(db, "age > ? AND age < ?", [1]) },
            { _ = try User.fetchAll(db, "age > 1", [1]) },
            { _ = try User.count(db, "age > ?", [1, 2]) },
            { _ = try User.check(db, "age > ?") },
            { _ = try User.deleteAll(db, "age > ?", [1, 2]) },
            { _ = try User.updateAll(db, ["age": 1], "age > ?") },
            { _ = try User.updateAll(db, ["age": 1], "age > ?", [1, 2]) },
            { _ = try db.fetchAll("User", "age > ?", []) },
            { _ = try db.fetchAll(sql: "SELECT ?", [1, 2]) },
            { try db.execute("UPDATE User SET age = ?") },
        ]
        for attempt in attempts {
            let error = try #require(throws: GQLError.self) { try attempt() }
            #expect(error.code == .invalidArgument, "\(error)")
        }
        #expect(try User.fetchAll(db) == [makeUser(1, age: 40)])
    }

    @Test func missingOrExtraNamedArgumentsAreInvalidArgument() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, age: 40).insert(db)
        let missing = try #require(throws: GQLError.self) {
            try User.fetchAll(db, "age >= :min AND age <= :max", [":min": 18])
        }
        #expect(missing.code == .invalidArgument)
        #expect(missing.message.contains(":max"))
        #expect(missing.sql?.contains(":max") == true)

        let extra = try #require(throws: GQLError.self) {
            try User.fetchAll(db, "age >= :min", [":min": 18, ":typo": 1])
        }
        #expect(extra.code == .invalidArgument)
        #expect(extra.message.contains(":typo"))

        let positionalForNamed = try #require(throws: GQLError.self) { try User.count(db, "age > ?", [":a": 1]) }
        #expect(positionalForNamed.code == .invalidArgument)

        var both = GQLArguments([1])
        both.named = [":a": 2]
        let mixed = try #require(throws: GQLError.self) { try User.count(db, "age > :a", both) }
        #expect(mixed.code == .invalidArgument)

        let inUpdate = try #require(throws: GQLError.self) {
            try User.updateAll(db, ["age": 1], "age >= :min AND age <= :max", [":max": 99])
        }
        #expect(inUpdate.code == .invalidArgument)
        #expect(inUpdate.message.contains(":min"))
        #expect(try User.fetchAll(db) == [makeUser(1, age: 40)])
    }

    // MARK: Types

    @Test func aPrimaryKeyThatIsNotAPropertyIsMissingPrimaryKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let attempts: [() throws -> Void] = [
            { try db.register(WrongKey.self) },
            { try WrongKey().insert(db) },
            { _ = try WrongKey.fetchAll(db) },
            { _ = try WrongKey.fetchOne(db, key: 1) },
            { _ = try WrongKey().values() },
        ]
        for attempt in attempts {
            let error = try #require(throws: GQLError.self) { try attempt() }
            #expect(error.code == .missingPrimaryKey)
            #expect(error.table == "WrongKey")
            #expect(error.message.contains("identifier"))
        }
        #expect(try db.tableNames().isEmpty)
    }

    // MARK: Transactions used wrongly

    @Test func aWriteInsideAWriteIsNestedWrite() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let nested = try #require(throws: GQLError.self) {
            try db.write { _ in try db.write { _ in } }
        }
        #expect(nested.code == .nestedWrite)

        let attempts: [(GQLTransaction) throws -> Void] = [
            { _ in try makeUser(1).insert(db) },
            { _ in try User.updateAll(db, ["age": 1]) },
            { _ in try db.insert("User", ["userId": 2]) },
            { _ in try db.execute("DELETE FROM User") },
            { _ in try db.cleanupDatabase() },
        ]
        for attempt in attempts {
            let error = try #require(throws: GQLError.self) {
                try db.write { tx in
                    try makeUser(9).insert(tx)
                    try attempt(tx)
                }
            }
            #expect(error.code == .nestedWrite)
        }
        // Nothing was kept, and the database still writes.
        #expect(try User.count(db) == 0)
        try db.write { tx in try makeUser(1).insert(tx) }
        try makeUser(2).insert(db)
        #expect(try User.count(db) == 2)
    }

    @Test func aTransactionUsedAfterItsClosureIsClosed() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let writeTx = try db.write { tx in tx }
        let readTx = try db.read { tx in tx }
        let attempts: [() throws -> Void] = [
            { try makeUser(2).insert(writeTx) },
            { _ = try User.fetchAll(writeTx) },
            { _ = try User.count(writeTx) },
            { try writeTx.insert("User", ["userId": 3]) },
            { try writeTx.execute("DELETE FROM User") },
            { _ = try writeTx.fetchAll(sql: "SELECT 1") },
            { _ = try User.fetchOne(readTx, key: 1) },
            { _ = try readTx.fetchAll("User") },
            { _ = try Loose.fetchAll(writeTx) },
        ]
        for attempt in attempts {
            let error = try #require(throws: GQLError.self) { try attempt() }
            #expect(error.code == .closed, "\(error)")
        }
        #expect(ids(try User.fetchAll(db, order: "userId")) == [1])
    }

    @Test func writingInsideAReadIsAnError() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        let attempts: [(GQLTransaction) throws -> Void] = [
            { tx in try makeUser(2).insert(tx) },
            { tx in try makeUser(1, "changed").update(tx) },
            { tx in try makeUser(1, "changed").insertUpdate(tx) },
            { tx in try makeUser(1).delete(tx) },
            { tx in try User.updateAll(tx, ["name": "changed"]) },
            { tx in try User.deleteAll(tx) },
            { tx in try tx.insert("User", ["userId": 3]) },
            { tx in try tx.deleteOne("User", key: 1) },
            { tx in try tx.execute("DELETE FROM User") },
            { tx in try Loose().insert(tx) },
        ]
        for attempt in attempts {
            #expect(throws: GQLError.self) { try db.read { tx in try attempt(tx) } }
        }
        let insert = try #require(throws: GQLError.self) { try db.read { tx in try makeUser(2).insert(tx) } }
        #expect(insert.code == .invalidArgument)
        #expect(insert.message.contains("db.read"))
        #expect(try User.fetchAll(db) == [makeUser(1)])
        #expect(try db.tableNames() == ["User"])
    }
}

private func ids(_ users: [User]) -> [Int] { users.map(\.userId) }
