import Foundation
import GQLStore
import Testing

/// A registered type with a blob, a date and JSON columns, to see how the dictionary API hands them out.
private struct Document: GQLObject, Equatable {
    var docId = 0
    var title = ""
    var body = Data()
    var attachment: Data? = nil
    var published = false
    var created = Date(timeIntervalSince1970: 0)
    var tags: [String] = []
    static func primaryKey() -> String { "docId" }
}

/// Every byte value, so a blob that is mangled anywhere (text conversion, NUL truncation) shows.
private let allBytes = Data((0...255).map(UInt8.init) + [0, 0, 255, 0])

/// Creates the raw table `Gadget` that no type registers.
private func makeGadgetTable(_ db: GQLDatabase) throws {
    try db.execute(
        """
        CREATE TABLE Gadget (
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL DEFAULT '',
            price REAL,
            payload BLOB,
            inStock BOOLEAN,
            count INTEGER NOT NULL DEFAULT 0
        )
        """)
}

private func seedUsers(_ db: GQLDatabase) throws {
    try db.register(User.self)
    for n in 1...6 {
        let id = n
        let name = "U\(n)"
        let age = n * 10
        try db.insert("User", ["userId": id, "name": name, "age": age, "approved": n > 3])
    }
}

private func userIds(_ rows: [GQLValues]) -> [Int64] { rows.compactMap { $0["userId"]?.intValue } }
private func gadgetIds(_ rows: [GQLValues]) -> [Int64] { rows.compactMap { $0["id"]?.intValue } }

@Suite struct DictionaryAPITests {
    // MARK: On a registered type's table

    @Test func insertAndFetchOneOnUser() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        let id = 1001
        let name = "John Smith"
        let approved = false
        try db.insert("User", ["userId": id, "name": name, "age": 42, "approved": approved])
        let row = try #require(try db.fetchOne("User", key: id))
        #expect(row == ["userId": 1001, "name": "John Smith", "age": 42, "approved": false, "nickname": .null])
        #expect(try User.fetchOne(db, key: 1001) == makeUser(1001, "John Smith", age: 42))
        #expect(try db.fetchOne("User", key: 1002) == nil)
    }

    @Test func boolColumnsOfRegisteredTypesComeBackAsBool() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, approved: true).insert(db)
        try makeUser(2, approved: false).insert(db)
        let rows = try db.fetchAll("User", order: "userId")
        #expect(rows.map { $0["approved"] } == [.bool(true), .bool(false)])
        #expect(try db.fetchOne("User", key: 1)?["approved"] == .bool(true))
        // Written as a bool through the dictionary API too.
        try db.insert("User", ["userId": 3, "approved": true])
        #expect(try db.fetchOne("User", key: 3)?["approved"] == .bool(true))
        #expect(try User.fetchOne(db, key: 3)?.approved == true)
    }

    @Test func updateChangesOnlyTheGivenColumns() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        let newAge = 43
        try db.update("User", ["userId": 2, "age": newAge, "nickname": "two"])
        #expect(
            try db.fetchOne("User", key: 2)
                == ["userId": 2, "name": "U2", "age": 43, "approved": false, "nickname": "two"])
        try db.update("User", ["userId": 2, "nickname": GQLNull])
        #expect(try db.fetchOne("User", key: 2)?["nickname"] == .null)
        #expect(try db.fetchOne("User", key: 3)?["age"] == 30)
    }

    @Test func updateOfAMissingRowAndWithoutKeyAreErrors() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        let missing = try #require(throws: GQLError.self) { try db.update("User", ["userId": 99, "age": 1]) }
        #expect(missing.code == .notFound)
        #expect(missing.table == "User")
        let noKey = try #require(throws: GQLError.self) { try db.update("User", ["age": 1]) }
        #expect(noKey.code == .missingPrimaryKey)
        #expect(noKey.column == "userId")
        #expect(try db.count("User", "age = 1") == 0)
        #expect(try db.count("User") == 6)
        // With nothing but the key, a missing row is still not found.
        let onlyKey = try #require(throws: GQLError.self) { try db.update("User", ["userId": 99]) }
        #expect(onlyKey.code == .notFound)
        try db.update("User", ["userId": 1])
        #expect(try db.fetchOne("User", key: 1)?["name"] == "U1")
    }

    @Test func insertUpdateAndUpdateInsertUpsert() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        // Existing row: only the given columns change.
        try db.insertUpdate("User", ["userId": 1, "age": 11])
        #expect(
            try db.fetchOne("User", key: 1) == [
                "userId": 1, "name": "U1", "age": 11, "approved": false, "nickname": .null,
            ])
        try db.updateInsert("User", ["userId": 2, "name": "Two", "approved": true])
        #expect(
            try db.fetchOne("User", key: 2) == [
                "userId": 2, "name": "Two", "age": 20, "approved": true, "nickname": .null,
            ])
        // Missing row: inserted, other columns take their defaults.
        try db.insertUpdate("User", ["userId": 7, "name": "Seven"])
        #expect(try User.fetchOne(db, key: 7) == makeUser(7, "Seven", age: 0))
        try db.updateInsert("User", ["userId": 8, "age": 80, "nickname": "eight"])
        var eight = makeUser(8, "", age: 80)
        eight.nickname = "eight"
        #expect(try User.fetchOne(db, key: 8) == eight)
        // Only the key: inserts when missing, changes nothing when present.
        try db.insertUpdate("User", ["userId": 9])
        try db.insertUpdate("User", ["userId": 1])
        #expect(try db.fetchOne("User", key: 1)?["age"] == 11)
        #expect(try db.count("User") == 9)
        let noKey = try #require(throws: GQLError.self) { try db.insertUpdate("User", ["age": 1]) }
        #expect(noKey.code == .missingPrimaryKey)
    }

    @Test func deleteByTheKeyInTheValues() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        let values = try #require(try db.fetchOne("User", key: 3))
        #expect(try db.delete("User", values))
        #expect(try db.delete("User", values) == false)
        #expect(try db.delete("User", ["userId": 4]))
        #expect(userIds(try db.fetchAll("User", order: "userId")) == [1, 2, 5, 6])
        let noKey = try #require(throws: GQLError.self) { try db.delete("User", ["name": "U1"]) }
        #expect(noKey.code == .missingPrimaryKey)
        #expect(try db.count("User") == 4)
    }

    @Test func fetchOneAndFetchAllWithConditionsOrderLimitOffset() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        let minimum = 25
        #expect(try db.fetchOne("User", "age > ?", [minimum], order: "age")?["userId"] == 3)
        #expect(try db.fetchOne("User", "age > :m", [":m": minimum], order: "age DESC")?["userId"] == 6)
        #expect(try db.fetchOne("User", "age > 1000") == nil)
        #expect(userIds(try db.fetchAll("User", "age >= ? AND age <= ?", [20, 40], order: "age")) == [2, 3, 4])
        #expect(
            userIds(
                try db.fetchAll(
                    "User", "age >= :min AND age <= :max", [":min": 18, ":max": 99], order: "age DESC", limit: 2,
                    offset: 1))
                == [5, 4])
        #expect(userIds(try db.fetchAll("User", order: "userId", offset: 4)) == [5, 6])
        #expect(userIds(try db.fetchAll("User", order: "userId", limit: 2)) == [1, 2])
        #expect(try db.fetchAll("User").count == 6)
    }

    @Test func countCheckUpdateAllUpdateOneDeleteAllDeleteOne() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        #expect(try db.count("User") == 6)
        #expect(try db.count("User", "approved = ?", [true]) == 3)
        #expect(try db.check("User"))
        #expect(try db.check("User", key: 6))
        #expect(try db.check("User", key: 60) == false)
        #expect(try db.check("User", "age > :a", [":a": 55]))
        #expect(try db.check("User", "age > :a", [":a": 65]) == false)

        let newName = "Renamed"
        #expect(try db.updateAll("User", ["name": newName], "age < ?", [30]) == 2)
        #expect(try db.count("User", "name = ?", [newName]) == 2)
        #expect(try db.updateOne("User", ["age": 99], key: 6))
        #expect(try db.updateOne("User", ["age": 99], key: 60) == false)
        #expect(try db.fetchOne("User", key: 6)?["age"] == 99)
        #expect(try db.updateAll("User", ["nickname": "all"]) == 6)

        #expect(try db.deleteOne("User", key: 6))
        #expect(try db.deleteOne("User", key: 6) == false)
        #expect(try db.deleteAll("User", "age >= :min", [":min": 40]) == 2)
        #expect(userIds(try db.fetchAll("User", order: "userId")) == [1, 2, 3])
        #expect(try db.deleteAll("User") == 3)
        #expect(try db.check("User") == false)
    }

    @Test func unknownColumnsAndEmptyValuesAreRejected() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        let unknown = try #require(throws: GQLError.self) { try db.insert("User", ["userId": 50, "shoeSize": 44]) }
        #expect(unknown.code == .invalidArgument)
        #expect(unknown.column == "shoeSize")
        let empty = try #require(throws: GQLError.self) { try db.insert("User", [:]) }
        #expect(empty.code == .invalidArgument)
        let update = try #require(throws: GQLError.self) { try db.updateAll("User", ["shoeSize": 1]) }
        #expect(update.code == .invalidArgument)
        #expect(try db.count("User") == 6)
    }

    @Test func dictionaryVerbsJoinATransaction() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(User.self)
        try db.write { tx in
            try tx.insert("User", ["userId": 1, "name": "A"])
            try tx.insert("User", ["userId": 2, "name": "B"])
            try tx.update("User", ["userId": 1, "age": 5])
            #expect(try tx.fetchOne("User", key: 1)?["age"] == 5)
            #expect(try tx.count("User") == 2)
        }
        #expect(try db.count("User") == 2)
        #expect(throws: CancellationError.self) {
            try db.write { tx in
                try tx.insert("User", ["userId": 3])
                try tx.deleteAll("User")
                throw CancellationError()
            }
        }
        #expect(userIds(try db.fetchAll("User", order: "userId")) == [1, 2])
    }

    @Test func valuesOfARegisteredTypeRoundTrip() throws {
        let temp = try TempDatabase()
        let db = temp.db
        var document = Document()
        document.docId = 1
        document.title = "Hello"
        document.body = allBytes
        document.attachment = Data([0xFF, 0x00, 0x01])
        document.published = true
        document.created = Date(timeIntervalSince1970: 1_700_000_000.25)
        document.tags = ["a", "b"]
        try db.register(Document.self)
        try db.insert("Document", try document.values())
        let row = try #require(try db.fetchOne("Document", key: 1))
        #expect(row["body"] == .data(allBytes))
        #expect(row["attachment"] == .data(Data([0xFF, 0x00, 0x01])))
        #expect(row["published"] == .bool(true))
        #expect(row["created"] == "2023-11-14T22:13:20.250Z")
        #expect(row["tags"] == ["a", "b"])
        #expect(row == (try document.values()))
        #expect(try Document.fetchOne(db, key: 1) == document)
        // And back in through the dictionary API, unchanged.
        try db.delete("Document", row)
        try db.insert("Document", row)
        #expect(try Document.fetchOne(db, key: 1) == document)
    }

    @Test func blobsRoundTripExactlyOnARegisteredType() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Document.self)
        let blobs: [Data] = [Data(), Data([0]), allBytes, Data(repeating: 0xAB, count: 100_000), Data("text?".utf8)]
        for (i, blob) in blobs.enumerated() {
            try db.insert("Document", ["docId": i, "body": blob, "attachment": blob])
        }
        for (i, blob) in blobs.enumerated() {
            let row = try #require(try db.fetchOne("Document", key: i))
            #expect(row["body"] == .data(blob))
            #expect(row["attachment"] == .data(blob))
            #expect(try Document.fetchOne(db, key: i)?.body == blob)
        }
        let nothing: Data? = nil
        try db.updateOne("Document", ["attachment": nothing], key: 0)
        #expect(try db.fetchOne("Document", key: 0)?["attachment"] == .null)
    }

    @Test func updatesStoreEveryKindOfValueExactly() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Document.self)
        try db.insert("Document", ["docId": 1, "title": "t", "body": Data([1]), "attachment": Data([2])])
        try db.insert("Document", ["docId": 2])
        let when = Date(timeIntervalSince1970: 1_700_000_000.5)
        try db.update("Document", ["docId": 1, "title": "a\u{0}b", "body": Data(), "created": when, "tags": ["x"]])
        #expect(try db.updateAll("Document", ["attachment": Data(), "published": true], "docId = ?", [2]) == 1)
        #expect(try db.updateOne("Document", ["title": ""], key: 2))
        var one = Document()
        one.docId = 1
        one.title = "a\u{0}b"
        one.created = when
        one.tags = ["x"]
        one.attachment = Data([2])
        var two = Document()
        two.docId = 2
        two.attachment = Data()
        two.published = true
        #expect(try Document.fetchAll(db, order: "docId") == [one, two])
        #expect(try db.fetchOne("Document", key: 1)?["body"] == .data(Data()))
        #expect(try db.fetchOne("Document", key: 2)?["attachment"] == .data(Data()))
    }

    // MARK: On a table made with raw SQL

    @Test func everyVerbOnARawTable() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeGadgetTable(db)
        let price = 9.5
        try db.insert("Gadget", ["id": 1, "label": "Widget", "price": price, "payload": allBytes, "inStock": true])
        try db.insert("Gadget", ["id": 2, "label": "Gizmo", "count": 3])
        try db.insert("Gadget", ["id": 3, "label": "Doohickey", "price": 1.25, "count": 7])

        #expect(
            try db.fetchOne("Gadget", key: 1)
                == ["id": 1, "label": "Widget", "price": 9.5, "payload": .data(allBytes), "inStock": true, "count": 0])
        #expect(
            try db.fetchOne("Gadget", key: 2)
                == ["id": 2, "label": "Gizmo", "price": .null, "payload": .null, "inStock": .null, "count": 3])

        try db.update("Gadget", ["id": 2, "price": 4.0, "inStock": false])
        #expect(try db.fetchOne("Gadget", key: 2)?["price"] == 4.0)
        #expect(try db.fetchOne("Gadget", key: 2)?["inStock"] == false)
        #expect(throws: GQLError.self) { try db.update("Gadget", ["id": 42, "price": 1.0]) }

        try db.insertUpdate("Gadget", ["id": 3, "count": 8])
        try db.insertUpdate("Gadget", ["id": 4, "label": "Thing"])
        try db.updateInsert("Gadget", ["id": 4, "price": 2.5])
        try db.updateInsert("Gadget", ["id": 5, "label": "Five"])
        #expect(try db.fetchOne("Gadget", key: 3)?["count"] == 8)
        #expect(try db.fetchOne("Gadget", key: 3)?["label"] == "Doohickey")
        #expect(try db.fetchOne("Gadget", key: 4)?["label"] == "Thing")
        #expect(try db.fetchOne("Gadget", key: 4)?["price"] == 2.5)

        #expect(try db.count("Gadget") == 5)
        #expect(try db.count("Gadget", "price > ?", [2]) == 3)
        #expect(try db.check("Gadget", key: 5))
        #expect(try db.check("Gadget", key: 6) == false)
        #expect(try db.check("Gadget", "label = :l", [":l": "Gizmo"]))
        #expect(gadgetIds(try db.fetchAll("Gadget", "price IS NOT NULL", order: "price DESC")) == [1, 2, 4, 3])
        #expect(gadgetIds(try db.fetchAll("Gadget", order: "id", limit: 2, offset: 1)) == [2, 3])
        #expect(gadgetIds(try db.fetchAll("Gadget", order: "id", offset: 3)) == [4, 5])
        #expect(try db.fetchOne("Gadget", "count > ?", [0], order: "count DESC")?["id"] == 3)

        #expect(try db.updateAll("Gadget", ["count": 100], "price < ?", [5]) == 3)
        #expect(try db.updateOne("Gadget", ["label": "Renamed"], key: 1))
        #expect(try db.updateOne("Gadget", ["label": "Nobody"], key: 99) == false)
        #expect(try db.count("Gadget", "count = 100") == 3)
        #expect(try db.fetchOne("Gadget", key: 1)?["label"] == "Renamed")

        #expect(try db.delete("Gadget", ["id": 5]))
        #expect(try db.deleteOne("Gadget", key: 4))
        #expect(try db.deleteOne("Gadget", key: 4) == false)
        #expect(try db.deleteAll("Gadget", "count = ?", [100]) == 2)
        #expect(gadgetIds(try db.fetchAll("Gadget")) == [1])
        #expect(try db.deleteAll("Gadget") == 1)
        #expect(try db.count("Gadget") == 0)
        // No type was registered for it: the schema verbs do not know the name.
        #expect(throws: GQLError.self) { try db.dropTable("Gadget") }
    }

    @Test func blobsRoundTripExactlyOnARawTable() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeGadgetTable(db)
        let blobs: [Data] = [Data(), Data([0]), Data([0, 0, 0]), allBytes, Data(repeating: 0x5A, count: 65_537)]
        for (i, blob) in blobs.enumerated() {
            try db.insert("Gadget", ["id": i, "payload": blob])
        }
        let rows = try db.fetchAll("Gadget", order: "id")
        #expect(rows.map { $0["payload"] } == blobs.map { GQLValue.data($0) })
        // Raw SQL sees real blobs, not text.
        let types = try db.fetchAll(sql: "SELECT typeof(payload) AS t, length(payload) AS n FROM Gadget ORDER BY id")
        #expect(types.map { $0["t"] } == Array(repeating: "blob", count: blobs.count))
        #expect(types.map { $0["n"]?.intValue } == blobs.map { Int64($0.count) })
        // A blob also works as an argument.
        #expect(try db.fetchOne("Gadget", "payload = ?", [allBytes])?["id"] == 3)
    }

    @Test func aRawTableWithAQuotedNameAndTextKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.execute(#"CREATE TABLE "odd ""name""" ("the key" TEXT PRIMARY KEY, "value" INTEGER)"#)
        let table = #"odd "name""#
        try db.insert(table, ["the key": "a", "value": 1])
        try db.insertUpdate(table, ["the key": "b", "value": 2])
        try db.update(table, ["the key": "a", "value": 10])
        #expect(try db.fetchOne(table, key: "a") == ["the key": "a", "value": 10])
        #expect(try db.fetchAll(table, #""value" > ?"#, [1], order: #""the key""#).map { $0["the key"] } == ["a", "b"])
        #expect(try db.deleteOne(table, key: "b"))
        #expect(try db.count(table) == 1)
    }

    @Test func aColumnAddedWithRawSQLIsSeenAtOnce() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeGadgetTable(db)
        try db.insert("Gadget", ["id": 1, "label": "A"])
        #expect(try db.fetchOne("Gadget", key: 1)?["color"] == nil)
        try db.execute("ALTER TABLE Gadget ADD COLUMN color TEXT")
        try db.update("Gadget", ["id": 1, "color": "red"])
        #expect(try db.fetchOne("Gadget", key: 1)?["color"] == "red")
        try db.write { tx in
            try tx.execute("ALTER TABLE Gadget ADD COLUMN size INTEGER")
            try tx.insert("Gadget", ["id": 2, "size": 3])
        }
        #expect(try db.fetchOne("Gadget", key: 2)?["size"] == 3)
        #expect(try db.fetchOne("Gadget", key: 1)?["size"] == .null)
    }

    @Test func aRawTableWithoutAPrimaryKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.execute("CREATE TABLE Log (message TEXT, level INTEGER)")
        try db.insert("Log", ["message": "one", "level": 1])
        try db.insert("Log", ["message": "two", "level": 2])
        #expect(try db.count("Log") == 2)
        #expect(try db.fetchAll("Log", "level > ?", [1]) == [["message": "two", "level": 2]])
        #expect(try db.updateAll("Log", ["level": 5], "message = ?", ["one"]) == 1)
        #expect(try db.deleteAll("Log", "level = 5") == 1)
        #expect(try db.fetchAll("Log").map { $0["message"] } == ["two"])
        // Without a declared key, the key verbs address the rowid.
        try db.insert("Log", ["message": "three", "level": 3])
        let rowid = try #require(
            try db.fetchAll(sql: "SELECT rowid AS id FROM Log WHERE message = 'three'").first?["id"]?.intValue)
        #expect(try db.fetchOne("Log", key: rowid) == ["message": "three", "level": 3])
        #expect(try db.check("Log", key: rowid))
        try db.update("Log", ["rowid": rowid, "level": 30])
        #expect(try db.updateOne("Log", ["message": "THREE"], key: rowid))
        #expect(try db.fetchOne("Log", key: rowid) == ["message": "THREE", "level": 30])
        #expect(try db.deleteOne("Log", key: rowid))
        #expect(try db.count("Log") == 1)
    }

    /// A composite key names no single row: the verbs that take "the" key refuse instead of touching every
    /// row that shares its first column.
    @Test func aRawTableWithACompositeKey() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.execute("CREATE TABLE Pair (a INTEGER, b INTEGER, v TEXT, PRIMARY KEY (a, b))")
        try db.insert("Pair", ["a": 1, "b": 1, "v": "x"])
        try db.insert("Pair", ["a": 1, "b": 2, "v": "y"])
        #expect(try db.count("Pair", "a = ?", [1]) == 2)
        #expect(try db.updateAll("Pair", ["v": "z"], "a = ? AND b = ?", [1, 2]) == 1)

        let before: [GQLValues] = [["a": 1, "b": 1, "v": "x"], ["a": 1, "b": 2, "v": "z"]]
        let attempts: [(String, () throws -> Void)] = [
            ("update", { try db.update("Pair", ["a": 1, "b": 2, "v": "w"]) }),
            ("deleteOne", { _ = try db.deleteOne("Pair", key: 1) }),
            ("delete", { _ = try db.delete("Pair", ["a": 1, "b": 1]) }),
            ("updateOne", { _ = try db.updateOne("Pair", ["v": "w"], key: 1) }),
            ("fetchOne", { _ = try db.fetchOne("Pair", key: 1) }),
            ("insertUpdate", { try db.insertUpdate("Pair", ["a": 1, "b": 1, "v": "w"]) }),
        ]
        for (verb, attempt) in attempts {
            try db.execute("DELETE FROM Pair; INSERT INTO Pair (a, b, v) VALUES (1, 1, 'x'), (1, 2, 'z')")
            do {
                try attempt()
                Issue.record("\(verb) on a composite key did not throw")
            } catch let error as GQLError {
                #expect(error.code == .missingPrimaryKey, "\(verb): \(error)")
            }
            #expect(try db.fetchAll(sql: "SELECT a, b, v FROM Pair ORDER BY a, b") == before, "after \(verb)")
        }
    }

    @Test func unknownTablesAreErrors() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let attempts: [() throws -> Void] = [
            { try db.insert("Nope", ["id": 1]) },
            { _ = try db.fetchAll("Nope") },
            { _ = try db.fetchOne("Nope", key: 1) },
            { _ = try db.count("Nope") },
            { _ = try db.deleteAll("Nope") },
            { try db.update("Nope", ["id": 1, "x": 2]) },
        ]
        for attempt in attempts {
            let error = try #require(throws: GQLError.self) { try attempt() }
            #expect(error.code == .unknownTable)
            #expect(error.table == "Nope")
        }
    }

    // MARK: fetchAll(sql:)

    @Test func fetchAllSQL() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try seedUsers(db)
        try db.insert("User", ["userId": 7, "name": "U1", "age": 5])
        let rows = try db.fetchAll(
            sql: "SELECT name, COUNT(*) AS n, SUM(age) AS total FROM User GROUP BY name HAVING n > 1")
        #expect(rows == [["name": "U1", "n": 2, "total": 15]])
        let minimum = 30
        let named = try db.fetchAll(sql: "SELECT userId FROM User WHERE age >= :min ORDER BY userId", [":min": minimum])
        #expect(named.map { $0["userId"] } == [3, 4, 5, 6])
        let positional = try db.fetchAll(sql: "SELECT ? AS a, ? AS b, ? AS c, ? AS d", [1, "two", 3.5, Data([1, 2])])
        #expect(positional == [["a": 1, "b": "two", "c": 3.5, "d": .data(Data([1, 2]))]])
        #expect(try db.fetchAll(sql: "SELECT NULL AS x") == [["x": .null]])
        #expect(try db.fetchAll(sql: "SELECT * FROM User WHERE 0").isEmpty)
        let inTx = try db.read { tx in try tx.fetchAll(sql: "SELECT COUNT(*) AS n FROM User") }
        #expect(inTx == [["n": 7]])
    }
}
