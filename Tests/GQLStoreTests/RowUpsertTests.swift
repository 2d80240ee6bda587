import Foundation
import GQLStore
import Testing

/// A registered type with a JSON column, for the package-level upsert GQLSync writes server items with.
private struct Card: GQLObject, Equatable {
    var cardId = ""
    var title = ""
    var tags: [String] = []
    var note: String? = nil
    static func primaryKey() -> String { "cardId" }
}

@Suite struct RowUpsertTests {
    @Test func writesWhatInsertUpdateWrites() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Card.self)
        let rows: [[GQLValue]] = [
            ["a", "first", .array(["x", "y"]), .null],
            ["b", "second", .array([]), "kept"],
        ]
        try db.write { tx in
            let upsert = try tx.rowUpsert("Card", columns: ["cardId", "title", "tags", "note"])
            for row in rows { try tx.upsert(upsert, row) }
        }
        try db.write { tx in
            for row in rows {
                try tx.insertUpdate(
                    "Card",
                    [
                        "cardId": .string("d-" + (row[0].stringValue ?? "")), "title": row[1], "tags": row[2],
                        "note": row[3],
                    ])
            }
        }
        let upserted = try db.fetchAll(
            sql: "SELECT title, tags, note FROM Card WHERE cardId IN ('a', 'b') ORDER BY cardId")
        let inserted = try db.fetchAll(
            sql: "SELECT title, tags, note FROM Card WHERE cardId IN ('d-a', 'd-b') ORDER BY cardId")
        #expect(upserted == inserted)
        #expect(try Card.fetchOne(db, key: "a") == Card(cardId: "a", title: "first", tags: ["x", "y"]))
    }

    @Test func updatesOnlyTheNamedColumnsOfAnExistingRow() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try Card(cardId: "a", title: "old", tags: ["t"], note: "mine").insert(db)
        try db.write { tx in
            let upsert = try tx.rowUpsert("Card", columns: ["title", "cardId"])
            try tx.upsert(upsert, ["new", "a"])
            try tx.upsert(upsert, ["fresh", "b"])
        }
        #expect(try Card.fetchOne(db, key: "a") == Card(cardId: "a", title: "new", tags: ["t"], note: "mine"))
        #expect(try Card.fetchOne(db, key: "b") == Card(cardId: "b", title: "fresh"))
    }

    @Test func refusesWhatInsertUpdateRefuses() throws {
        let temp = try TempDatabase()
        let db = temp.db
        try db.register(Card.self)
        try db.write { tx in
            #expect(throws: GQLError.self) { try tx.rowUpsert("Card", columns: ["title"]) }
            #expect(throws: GQLError.self) { try tx.rowUpsert("Card", columns: ["cardId", "colour"]) }
            #expect(throws: GQLError.self) { try tx.rowUpsert("NoSuchTable", columns: ["id"]) }
            let upsert = try tx.rowUpsert("Card", columns: ["cardId", "title"])
            #expect(throws: GQLError.self) { try tx.upsert(upsert, [.null, "no key"]) }
            #expect(throws: GQLError.self) { try tx.upsert(upsert, ["a"]) }
        }
        #expect(try Card.count(db) == 0)
    }
}
