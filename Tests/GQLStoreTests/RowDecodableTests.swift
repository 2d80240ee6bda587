import Foundation
import GQLCore
import GQLStore
import Testing

/// Every column kind, fetched through Codable.
private struct Sample: GQLObject, Equatable {
    var id = 0
    var big: Int64 = 0
    var small: Int32 = 0
    var score = 0.0
    var name = ""
    var flag = false
    var when = Date(timeIntervalSince1970: 0)
    var blob = Data()
    var tags: [String] = []
    var note: String? = nil
    var count: Int? = nil
    var seen: Date? = nil
    var codes: [Int]? = nil
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Sample" }
}

/// The same table, fetched with `init(row:)`; `viaRow` is no column and tells which path made the value.
private struct FastSample: GQLObject, GQLRowDecodable {
    var id = 0
    var big: Int64 = 0
    var small: Int32 = 0
    var score = 0.0
    var name = ""
    var flag = false
    var when = Date(timeIntervalSince1970: 0)
    var blob = Data()
    var tags: [String] = []
    var note: String? = nil
    var count: Int? = nil
    var seen: Date? = nil
    var codes: [Int]? = nil
    var viaRow = false
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Sample" }

    enum CodingKeys: String, CodingKey {
        case id, big, small, score, name, flag, when, blob, tags, note, count, seen, codes
    }

    init() {}

    init(row: GQLRow) throws {
        id = try row["id"]
        big = try row["big"]
        small = try row["small"]
        score = try row["score"]
        name = try row["name"]
        flag = try row["flag"]
        when = try row["when"]
        blob = try row["blob"]
        tags = try row["tags"]
        note = try row["note"]
        count = try row["count"]
        seen = try row["seen"]
        codes = try row["codes"]  // the generic subscript, with an optional
        viaRow = true
    }

    var plain: Sample {
        Sample(
            id: id, big: big, small: small, score: score, name: name, flag: flag, when: when, blob: blob, tags: tags,
            note: note, count: count, seen: seen, codes: codes)
    }
}

/// Reads a column that does not exist, or reads a column as the wrong type.
private struct Misread: GQLObject, GQLRowDecodable {
    var id = 0
    var name = ""
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Sample" }
    init() {}
    init(row: GQLRow) throws {
        id = try row["id"]
        name = try row["nickname"]
    }
}

private struct NameAsInt: GQLObject, GQLRowDecodable {
    var id = 0
    var name = 0
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Sample" }
    init() {}
    init(row: GQLRow) throws {
        id = try row["id"]
        name = try row["name"]
    }
}

@Suite struct RowDecodableTests {
    private func seeded() throws -> TempDatabase {
        let temp = try TempDatabase()
        var full = Sample()
        full.id = 1
        full.big = Int64.max
        full.small = -7
        full.score = 2.5
        full.name = "Ünïcode ✓"
        full.flag = true
        full.when = Date(timeIntervalSince1970: 1_700_000_000.123)
        full.blob = Data([0, 1, 2, 255])
        full.tags = ["a", "b"]
        full.note = "note"
        full.count = 3
        full.seen = Date(timeIntervalSince1970: 86_400)
        full.codes = [1, 2]
        try full.insert(temp.db)
        var empty = Sample()
        empty.id = 2
        try empty.insert(temp.db)
        return temp
    }

    @Test func fetchesUseInitRowAndAgreeWithCodable() throws {
        let temp = try seeded()
        let db = temp.db
        let viaCodable = try Sample.fetchAll(db, order: "id")
        let viaRow = try FastSample.fetchAll(db, order: "id")
        #expect(viaRow.allSatisfy { $0.viaRow })
        #expect(viaRow.map(\.plain) == viaCodable)
        #expect(viaCodable.count == 2)
        #expect(
            viaRow.last?.note == nil && viaRow.last?.seen == nil && viaRow.last?.count == nil
                && viaRow.last?.codes == nil)
        #expect(viaRow.first?.codes == [1, 2])

        let one = try #require(try FastSample.fetchOne(db, key: 1))
        #expect(one.viaRow)
        #expect(one.plain == viaCodable.first)
        let first = try #require(try FastSample.fetchOne(db, "flag = ?", [true]))
        #expect(first.viaRow && first.id == 1)
        let inTransaction = try db.read { tx in try FastSample.fetchAll(tx, "id > ?", [1]) }
        #expect(inTransaction.map(\.id) == [2])
        #expect(inTransaction.allSatisfy { $0.viaRow })
    }

    @Test func aMissingColumnOrAMisfitValueIsADecodingErrorNamingIt() throws {
        let temp = try seeded()
        let missing = try #require(throws: GQLError.self) { try Misread.fetchAll(temp.db) }
        #expect(missing.code == .decoding)
        #expect(missing.column == "nickname")
        #expect(missing.message.contains("has no column 'nickname'"))

        let misfit = try #require(throws: GQLError.self) { try NameAsInt.fetchOne(temp.db, key: 1) }
        #expect(misfit.code == .decoding)
        #expect(misfit.column == "name")
        #expect(misfit.message.contains("expected Int, found TEXT 'Ünïcode ✓'"))
    }
}
