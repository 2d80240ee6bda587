import Foundation
import GQLStore
import Testing

// MARK: Types

private struct Address: Codable, Equatable, Sendable {
    var street = ""
    var number = 0
    var since = Date(timeIntervalSince1970: 0)
    var floors: [Int] = []
}

private enum Mood: String, Codable, Sendable {
    case happy
    case grumpy
    case quoted = "it's \"complicated\""
}

/// One property of every supported type, plain and optional.
private struct Everything: GQLObject, Equatable {
    var id = 0
    var bool = false
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var int = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var float: Float = 0
    var double: Double = 0
    var string = ""
    var date = Date(timeIntervalSince1970: 0)
    var data = Data()
    var strings: [String] = []
    var counts: [String: Int] = [:]
    var address = Address()
    var mood = Mood.happy
    var uuid = UUID()
    var json: GQLValue = .null

    var optBool: Bool? = nil
    var optInt8: Int8? = nil
    var optInt16: Int16? = nil
    var optInt32: Int32? = nil
    var optInt64: Int64? = nil
    var optInt: Int? = nil
    var optUInt8: UInt8? = nil
    var optUInt16: UInt16? = nil
    var optUInt32: UInt32? = nil
    var optFloat: Float? = nil
    var optDouble: Double? = nil
    var optString: String? = nil
    var optDate: Date? = nil
    var optData: Data? = nil
    var optStrings: [String]? = nil
    var optCounts: [String: Int]? = nil
    var optAddress: Address? = nil
    var optMood: Mood? = nil
    var optUUID: UUID? = nil
    var optJSON: GQLValue? = nil

    static func primaryKey() -> String { "id" }

    static let nonOptionalColumns = [
        "id", "bool", "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "float", "double",
        "string", "date", "data", "strings", "counts", "address", "mood", "uuid", "json",
    ]
    static let optionalColumns = [
        "optBool", "optInt8", "optInt16", "optInt32", "optInt64", "optInt", "optUInt8", "optUInt16", "optUInt32",
        "optFloat", "optDouble", "optString", "optDate", "optData", "optStrings", "optCounts", "optAddress",
        "optMood", "optUUID", "optJSON",
    ]

    /// Extreme and awkward values in every property; optionals set.
    static func filled(_ id: Int) -> Everything {
        var e = Everything()
        e.id = id
        e.bool = true
        e.int8 = .min
        e.int16 = .max
        e.int32 = .min
        e.int64 = .max
        e.int = .min
        e.uint8 = .max
        e.uint16 = .max
        e.uint32 = .max
        e.float = 3.14159
        e.double = .pi
        e.string = "héllo 👋 'quote' \"double\" \\ back\nline\u{0}nul"
        e.date = Date(timeIntervalSince1970: 1_700_000_000.25)
        e.data = Data((0...255).map(UInt8.init))
        e.strings = ["a", "b,c", "\"q\"", ""]
        e.counts = ["x": 1, "y": -2, "with space": .max]
        e.address = Address(
            street: "Main St", number: 12, since: Date(timeIntervalSince1970: -86_400.5), floors: [1, 2])
        e.mood = .quoted
        e.uuid = UUID()
        e.json = ["a": 1, "b": [true, "x", 2.5, nil], "c": ["d": "e"]]

        e.optBool = false
        e.optInt8 = 8
        e.optInt16 = -16
        e.optInt32 = 32
        e.optInt64 = .min
        e.optInt = 0
        e.optUInt8 = 0
        e.optUInt16 = 16
        e.optUInt32 = 32
        e.optFloat = -0.5
        e.optDouble = 1e300
        e.optString = ""
        e.optDate = Date(timeIntervalSince1970: 0)
        e.optData = Data()
        e.optStrings = []
        e.optCounts = ["only": 1]
        e.optAddress = Address(street: "Side St", number: 1)
        e.optMood = .grumpy
        e.optUUID = UUID()
        e.optJSON = "just a string"
        return e
    }
}

/// Property names that are SQL keywords or need quoting.
private struct Keywords: GQLObject, Equatable {
    var id = 0
    var order = 0
    var group = ""
    var select = false
    var quoted = ""
    var spaced = 0
    enum CodingKeys: String, CodingKey {
        case id, order, group, select
        case quoted = #"it's "quoted""#
        case spaced = "with space"
    }
    static func primaryKey() -> String { "id" }
}

/// A table name and a key that need quoting.
private struct Odd: GQLObject, Equatable {
    var key = ""
    var value = 0
    enum CodingKeys: String, CodingKey {
        case key = #"the "key""#
        case value = "where"
    }
    static func primaryKey() -> String { #"the "key""# }
    static func tableName() -> String { #"select "from" 'table'"# }
}

private struct MemberV1: GQLObject, Equatable {
    var id = 0
    var name = ""
    var legacy = "old"
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Member" }
}

private struct MemberV2: GQLObject, Equatable {
    var id = 0
    var name = ""
    var level = 7
    var score = 1.5
    var nickname: String? = nil
    var tags: [String] = ["new"]
    var active = true
    var joined = Date(timeIntervalSince1970: 86_400)
    var avatar = Data([1, 2, 3])
    var motto = "it's new"
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Member" }
}

private struct Tagged: GQLObject, Equatable {
    var id = 0
    var label = ""
    static func primaryKey() -> String { "id" }
}

/// Encodes as a single value, which no table can hold.
private struct SingleValue: GQLObject {
    var id = 0
    init() {}
    init(from decoder: any Decoder) throws { id = try decoder.singleValueContainer().decode(Int.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }
    static func primaryKey() -> String { "id" }
}

private let robert = "Robert'); DROP TABLE User;--"

/// `PRAGMA table_info` through the dictionary API, by column name.
private func tableInfo(_ db: GQLDatabase, _ table: String) throws -> [String: GQLValues] {
    let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    var columns: [String: GQLValues] = [:]
    for row in try db.fetchAll(sql: "PRAGMA table_info(\(quoted))") {
        if let name = row["name"]?.stringValue { columns[name] = row }
    }
    return columns
}

private func columnNames(_ db: GQLDatabase, _ table: String) throws -> [String] {
    let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    return try db.fetchAll(sql: "PRAGMA table_info(\(quoted))").compactMap { $0["name"]?.stringValue }
}

@Suite struct SchemaTests {
    // MARK: Codable shapes

    @Test func everySupportedTypeRoundTripsExactly() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let filled = Everything.filled(1)
        var empty = Everything()
        empty.id = 2
        try filled.insert(db)
        try empty.insert(db)
        #expect(try Everything.fetchOne(db, key: 1) == filled)
        #expect(try Everything.fetchOne(db, key: 2) == empty)
        #expect(try Everything.fetchAll(db, order: "id") == [filled, empty])

        // Update swaps them: every column is written, nils included.
        var swapped = empty
        swapped.id = 1
        try swapped.update(db)
        #expect(try Everything.fetchOne(db, key: 1) == swapped)
        var refilled = filled
        refilled.id = 2
        try refilled.insertUpdate(db)
        #expect(try Everything.fetchOne(db, key: 2) == refilled)
    }

    @Test func everySupportedTypeRoundTripsThroughTheDictionaryAPI() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Everything.self)
        let filled = Everything.filled(1)
        var empty = Everything()
        empty.id = 2
        empty.json = []  // a JSON null has its own test below
        try db.insert("Everything", try filled.values())
        try db.insert("Everything", try empty.values())
        #expect(try Everything.fetchAll(db, order: "id") == [filled, empty])
        // Rows read through the dictionary API go back in unchanged.
        let rows = try db.fetchAll("Everything", order: "id")
        try db.deleteAll("Everything")
        for row in rows { try db.insert("Everything", row) }
        #expect(try Everything.fetchAll(db, order: "id") == [filled, empty])
        var swapped = try filled.values()
        swapped["id"] = 2
        try db.update("Everything", swapped)
        var expected = filled
        expected.id = 2
        #expect(try Everything.fetchOne(db, key: 2) == expected)
    }

    /// A non-optional GQLValue property holding JSON null: `values()` hands out `.null`, which must go back in
    /// as the JSON text `null` (the column is NOT NULL), as the object API stores it.
    @Test func aGQLValuePropertyHoldingNullRoundTripsThroughValues() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Everything.self)
        var e = Everything()
        e.id = 1
        #expect(e.json == .null)
        try db.insert("Everything", try e.values())
        #expect(try Everything.fetchOne(db, key: 1) == e)

        var f = Everything()
        f.id = 2
        try f.insert(db)
        let row = try #require(try db.fetchOne("Everything", key: 2))
        #expect(row["json"] == .null)
        try db.delete("Everything", row)
        try db.insert("Everything", row)
        #expect(try Everything.fetchOne(db, key: 2) == f)
    }

    @Test func storedValuesHaveTheDocumentedForms() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let filled = Everything.filled(1)
        try filled.insert(db)
        let raw = try #require(
            try db.fetchAll(
                sql: """
                    SELECT typeof(bool) AS bool, date, typeof(data) AS data, strings, counts, address, mood,
                           uuid, json, typeof(double) AS double, int64
                    FROM Everything
                    """
            ).first)
        #expect(raw["bool"] == "integer")
        #expect(raw["date"] == "2023-11-14T22:13:20.250Z")
        #expect(raw["data"] == "blob")
        #expect(raw["double"] == "real")
        #expect(raw["int64"] == .int(.max))
        #expect(try GQLValue(json: try #require(raw["strings"]?.stringValue)) == ["a", "b,c", "\"q\"", ""])
        #expect(
            try GQLValue(json: try #require(raw["counts"]?.stringValue)) == ["x": 1, "y": -2, "with space": .int(.max)])
        #expect(try GQLValue(json: try #require(raw["address"]?.stringValue))["street"] == "Main St")
        #expect(raw["mood"] == "it's \"complicated\"")
        #expect(raw["uuid"] == .string(filled.uuid.uuidString))
        #expect(try GQLValue(json: try #require(raw["json"]?.stringValue)) == filled.json)

        // The dictionary API hands out bools as bools and JSON columns parsed.
        let row = try #require(try db.fetchOne("Everything", key: 1))
        #expect(row["bool"] == true)
        #expect(row["optBool"] == false)
        #expect(row["strings"] == ["a", "b,c", "\"q\"", ""])
        #expect(row["counts"] == ["x": 1, "y": -2, "with space": .int(.max)])
        #expect(row["address"]?["number"] == 12)
        #expect(row["json"] == filled.json)
        #expect(row["optJSON"] == "just a string")
        #expect(row["data"] == .data(filled.data))
        #expect(row["optData"] == .data(Data()))
        #expect(row["int8"] == .int(Int64(Int8.min)))
        #expect(row["uint32"] == .int(Int64(UInt32.max)))
        #expect(row == (try filled.values()))
    }

    @Test func optionalCollectionsComeBackParsedInTheDictionaryAPI() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let filled = Everything.filled(1)
        try filled.insert(db)
        let row = try #require(try db.fetchOne("Everything", key: 1))
        // Like their non-optional twins, optional arrays, dictionaries and nested types are JSON columns.
        #expect(row["optStrings"] == [])
        #expect(row["optCounts"] == ["only": 1])
        #expect(row["optAddress"]?["street"] == "Side St")
        let info = try tableInfo(db, "Everything")
        #expect(info["optStrings"]?["type"] == "TEXT")
        #expect(info["optCounts"]?["type"] == "TEXT")
        #expect(info["optAddress"]?["type"] == "TEXT")
    }

    @Test func optionalPropertiesAreNullableColumns() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Everything.self)
        let info = try tableInfo(db, "Everything")
        #expect(Set(info.keys) == Set(Everything.nonOptionalColumns + Everything.optionalColumns))
        for name in Everything.nonOptionalColumns {
            #expect(info[name]?["notnull"] == 1, "\(name) should be NOT NULL")
        }
        for name in Everything.optionalColumns {
            #expect(info[name]?["notnull"] == 0, "\(name) should be nullable")
        }
        #expect(info["id"]?["pk"] == 1)
        let expectedTypes: [String: GQLValue] = [
            "bool": "INTEGER", "int8": "INTEGER", "int64": "INTEGER", "uint32": "INTEGER", "float": "REAL",
            "double": "REAL", "string": "TEXT", "date": "TEXT", "data": "BLOB", "strings": "TEXT", "json": "TEXT",
            "optBool": "INTEGER", "optInt": "INTEGER", "optUInt8": "INTEGER", "optFloat": "REAL",
            "optDouble": "REAL", "optString": "TEXT", "optDate": "TEXT", "optData": "BLOB", "optJSON": "TEXT",
        ]
        for (name, type) in expectedTypes {
            #expect(info[name]?["type"] == type, "\(name)")
        }
        // NULL is accepted where the property is optional, refused where it is not.
        var e = Everything()
        e.id = 1
        try e.insert(db)
        #expect(try db.count("Everything", "optString IS NULL AND optDate IS NULL AND optData IS NULL") == 1)
        let error = try #require(throws: GQLError.self) { try db.execute("UPDATE Everything SET string = NULL") }
        #expect(error.code == .sqlite)
        #expect(error.message.contains("NOT NULL"))
    }

    @Test func keywordAndQuotedPropertyNamesWork() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let a = Keywords(id: 1, order: 3, group: "g1", select: true, quoted: "q'1", spaced: 10)
        let b = Keywords(id: 2, order: 1, group: "g2", select: false, quoted: "q\"2", spaced: 20)
        try a.insert(db)
        try b.insert(db)
        #expect(try columnNames(db, "Keywords") == ["id", "order", "group", "select", #"it's "quoted""#, "with space"])
        #expect(try Keywords.fetchAll(db, order: #""order" DESC"#) == [a, b])
        #expect(try Keywords.fetchAll(db, #""group" = ? AND "select" = ?"#, ["g2", false]) == [b])
        #expect(try Keywords.fetchAll(db, #""with space" > :n"#, [":n": 15]) == [b])

        var changed = a
        changed.order = 9
        changed.quoted = "changed"
        try changed.update(db)
        try changed.insertUpdate(db)
        #expect(try Keywords.fetchOne(db, key: 1) == changed)
        #expect(try Keywords.updateAll(db, ["order": 5, "group": "G", #"it's "quoted""#: "x", "with space": 0]) == 2)
        #expect(try Keywords.count(db, #""order" = 5 AND "group" = 'G' AND "it's ""quoted""" = 'x'"#) == 2)
        #expect(try Keywords.updateOne(db, ["select": true], key: 2))

        // The dictionary API uses the same names.
        try db.insert(
            "Keywords", ["id": 3, "order": 1, "group": "d", "select": true, #"it's "quoted""#: "d", "with space": 3])
        #expect(try db.fetchOne("Keywords", key: 3)?["with space"] == 3)
        #expect(try db.fetchOne("Keywords", key: 3)?["select"] == true)
        try db.update("Keywords", ["id": 3, #"it's "quoted""#: "dd"])
        #expect(try Keywords.fetchOne(db, key: 3)?.quoted == "dd")
        #expect(try Keywords.deleteAll(db, #""select" = ?"#, [true]) == 3)
        #expect(try Keywords.count(db) == 0)
    }

    @Test func tableNameAndKeyThatNeedQuoting() throws {
        let temp = try TempDatabase()
        let db = temp.db
        let name = Odd.tableName()
        try Odd(key: "a'b", value: 1).insert(db)
        try Odd(key: "c\"d", value: 2).insert(db)
        #expect(try db.tableNames().contains(name))
        #expect(try Odd.fetchOne(db, key: "a'b") == Odd(key: "a'b", value: 1))
        #expect(try Odd.fetchAll(db, order: #""where" DESC"#).map(\.key) == ["c\"d", "a'b"])
        try Odd(key: "a'b", value: 10).update(db)
        try Odd(key: "e", value: 3).updateInsert(db)
        #expect(try Odd.updateOne(db, ["where": 20], key: "c\"d"))
        #expect(try Odd.fetchAll(db, order: #""the ""key""""#).map(\.value) == [10, 20, 3])
        #expect(try Odd(key: "e").delete(db))
        #expect(try Odd.check(db, key: "e") == false)
        try db.insert(name, [#"the "key""#: "f", "where": 4])
        #expect(try db.fetchOne(name, key: "f")?["where"] == 4)
        #expect(try Odd.count(db) == 3)
        try db.dropTable(name)
        #expect(try db.tableNames().contains(name) == false)
        try db.createTable(name)
        #expect(try Odd.count(db) == 0)
    }

    @Test func valuesAreBoundNeverPasted() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1, robert).insert(db)
        var two = makeUser(2, "Two")
        two.nickname = robert
        try two.insert(db)
        try db.insert("User", ["userId": 3, "name": robert])
        try User.updateAll(db, ["nickname": robert], "name = ?", [robert])

        #expect(try db.tableNames().contains("User"))
        #expect(try User.count(db) == 3)
        #expect(try User.fetchOne(db, key: 1)?.name == robert)
        #expect(try User.fetchOne(db, key: 2)?.nickname == robert)
        #expect(ids(try User.fetchAll(db, "name = ?", [robert], order: "userId")) == [1, 3])
        #expect(ids(try User.fetchAll(db, "nickname = :n", [":n": robert], order: "userId")) == [1, 2, 3])
        #expect(try db.fetchAll(sql: "SELECT name FROM User WHERE userId = 3") == [["name": .string(robert)]])
        #expect(try User.deleteAll(db, "name = ?", [robert]) == 2)
        #expect(try User.count(db) == 1)

        // As a string primary key, too.
        try Tagged(id: 1, label: robert).insert(db)
        #expect(try Tagged.fetchOne(db, "label = ?", [robert])?.id == 1)
        try TextKeyed(key: robert, note: robert).insert(db)
        #expect(try TextKeyed.fetchOne(db, key: robert) == TextKeyed(key: robert, note: robert))
        #expect(try TextKeyed.check(db, key: robert))
        #expect(try db.fetchOne("TextKeyed", key: robert)?["note"] == .string(robert))
        #expect(try TextKeyed.deleteOne(db, key: robert))
        #expect(try db.tableNames().contains("User"))
    }

    // MARK: Automatic ADD COLUMN

    @Test func aNewPropertyAddsItsColumnWithTheDefault() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try MemberV1(id: 1, name: "One", legacy: "kept 1").insert(db)
        try MemberV1(id: 2, name: "Two", legacy: "kept 2").insert(db)
        #expect(try columnNames(db, "Member") == ["id", "name", "legacy"])

        let members = try MemberV2.fetchAll(db, order: "id")
        var expectedOne = MemberV2()
        expectedOne.id = 1
        expectedOne.name = "One"
        var expectedTwo = MemberV2()
        expectedTwo.id = 2
        expectedTwo.name = "Two"
        #expect(members == [expectedOne, expectedTwo])
        // Nothing was dropped: the old column and its values are still there.
        #expect(
            try columnNames(db, "Member")
                == [
                    "id", "name", "legacy", "level", "score", "nickname", "tags", "active", "joined", "avatar", "motto",
                ])
        #expect(try MemberV1.fetchAll(db, order: "id").map(\.legacy) == ["kept 1", "kept 2"])
        let info = try tableInfo(db, "Member")
        #expect(info["level"]?["dflt_value"] == "7")
        #expect(info["level"]?["notnull"] == 1)
        #expect(info["nickname"]?["notnull"] == 0)

        // Both shapes keep working on the one table.
        var three = MemberV2()
        three.id = 3
        three.level = 30
        three.nickname = "three"
        try three.insert(db)
        try MemberV1(id: 4, name: "Four").insert(db)
        #expect(try MemberV1.fetchOne(db, key: 3)?.legacy == "old")
        #expect(try MemberV2.fetchOne(db, key: 3) == three)
        #expect(try MemberV2.fetchOne(db, key: 4)?.level == 7)
        var one = expectedOne
        one.level = 11
        try one.update(db)
        #expect(try MemberV1.fetchOne(db, key: 1)?.legacy == "kept 1")
        #expect(try db.fetchOne("Member", key: 1)?["level"] == 11)
    }

    @Test func aNewPropertyIsAddedWhenTheFileIsOpenedAgain() throws {
        let temp = try TempDatabase()
        do {
            let first = try GQLDatabase(path: temp.path + ".v1")
            try MemberV1(id: 1, name: "One", legacy: "L").insert(first)
        }
        let second = try GQLDatabase(path: temp.path + ".v1")
        try second.register(MemberV2.self)
        var expected = MemberV2()
        expected.id = 1
        expected.name = "One"
        #expect(try MemberV2.fetchAll(second) == [expected])
        #expect(try MemberV1.fetchAll(second) == [MemberV1(id: 1, name: "One", legacy: "L")])
        #expect(try columnNames(second, "Member").contains("legacy"))
    }

    // MARK: register / createTable / dropTable / cleanupDatabase

    @Test func registerCreatesTheTableUpFront() throws {
        let temp = try TempDatabase()
        let db = temp.db
        #expect(try db.tableNames().contains("User") == false)
        try db.register(User.self)
        try db.register(User.self)
        #expect(try db.tableNames() == ["User"])
        #expect(try columnNames(db, "User") == ["userId", "name", "age", "approved", "nickname"])
        #expect(try db.count("User") == 0)
    }

    @Test func dropTableAndCreateTable() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        try db.dropTable("User")
        #expect(try db.tableNames().contains("User") == false)
        #expect(throws: GQLError.self) { try db.fetchAll(sql: "SELECT * FROM User") }
        try db.createTable("User")
        #expect(try db.tableNames().contains("User"))
        #expect(try User.count(db) == 0)
        // createTable on an existing table changes nothing.
        try makeUser(2).insert(db)
        try db.createTable("User")
        #expect(try User.count(db) == 1)
        // After a drop, the next use creates the table again.
        try db.dropTable("User")
        try makeUser(3).insert(db)
        #expect(ids(try User.fetchAll(db)) == [3])
        try db.dropTable("User")
        #expect(try db.fetchAll("User").isEmpty)
    }

    @Test func cleanupDatabaseEmptiesRegisteredTablesOnly() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        try Tagged(id: 1, label: "t").insert(db)
        try db.execute("CREATE TABLE Raw (id INTEGER PRIMARY KEY, v TEXT)")
        try db.insert("Raw", ["id": 1, "v": "stays"])
        try db.cleanupDatabase()
        #expect(try User.count(db) == 0)
        #expect(try Tagged.count(db) == 0)
        #expect(try db.tableNames() == ["Raw", "Tagged", "User"])
        #expect(try db.fetchAll("Raw") == [["id": 1, "v": "stays"]])
        try makeUser(2).insert(db)
        #expect(ids(try User.fetchAll(db)) == [2])
    }

    @Test func unknownNamesAreUnknownTable() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.execute("CREATE TABLE Raw (id INTEGER PRIMARY KEY)")
        for name in ["Nope", "Raw", "Tagged", "user"] {
            let create = try #require(throws: GQLError.self) { try db.createTable(name) }
            #expect(create.code == .unknownTable)
            #expect(create.table == name)
            let drop = try #require(throws: GQLError.self) { try db.dropTable(name) }
            #expect(drop.code == .unknownTable)
        }
        #expect(try db.tableNames() == ["Raw"])
    }

    @Test func aTableDroppedWithRawSQLIsCreatedAgainOnUse() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try makeUser(1).insert(db)
        try db.execute("DROP TABLE User")
        try makeUser(2).insert(db)
        #expect(ids(try User.fetchAll(db)) == [2])
        try db.write { tx in
            try tx.execute("DROP TABLE User")
            try makeUser(3).insert(tx)
        }
        #expect(ids(try User.fetchAll(db)) == [3])
    }

    @Test func aTypeThatIsNotAKeyedContainerIsAnEncodingError() throws {
        let temp = try TempDatabase()
        let error = try #require(throws: GQLError.self) { try temp.db.register(SingleValue.self) }
        #expect(error.code == .encoding)
        #expect(error.table == "SingleValue")
    }
}

private struct TextKeyed: GQLObject, Equatable {
    var key = ""
    var note = ""
    static func primaryKey() -> String { "key" }
}

private func ids(_ users: [User]) -> [Int] { users.map(\.userId) }
