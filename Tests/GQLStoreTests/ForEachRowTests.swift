import Foundation
import GQLStore
import Testing

/// The package-level positional row reader GQLSync's delivery loop reads its next items with.
@Suite struct ForEachRowTests {
    /// A database holding the table `item` made by `statements`.
    private static func items(_ statements: String...) throws -> TempDatabase {
        let temp = try TempDatabase()
        try temp.db.write { tx in
            for statement in statements { try tx.execute(statement) }
        }
        return temp
    }

    @Test func readsEachRowByPositionAndEachKindAsItIs() throws {
        let temp = try Self.items(
            "CREATE TABLE item (id INTEGER PRIMARY KEY, n, t)",
            "INSERT INTO item (id, n, t) VALUES (1, 7, 'seven'), (2, NULL, 'é \"x\"'), (3, 'text', 2.5)")
        let db = temp.db
        var rows: [(Int64?, Int64?, String?, String?, GQLValue)] = []
        try db.read { tx in
            try tx.forEachRow(sql: "SELECT id, n, t FROM item WHERE id > ? ORDER BY id", [0], table: "item") { row in
                rows.append((row.integer(0), row.integer(1), row.text(2), row.text(1), row.value(2)))
            }
        }
        #expect(rows.count == 3)
        #expect(rows.map(\.0) == [1, 2, 3])
        // A column of another kind reads as missing through the typed readers, and as it is through value().
        #expect(rows.map(\.1) == [7, nil, nil])
        #expect(rows.map(\.2) == ["seven", "é \"x\"", nil])
        #expect(rows.map(\.3) == [nil, nil, "text"])
        #expect(rows.map(\.4) == ["seven", "é \"x\"", .double(2.5)])
    }

    @Test func readsTheRowsAWriteReturnsAndNamesTheTableInItsErrors() throws {
        let temp = try Self.items(
            "CREATE TABLE item (id INTEGER PRIMARY KEY, attempts INTEGER NOT NULL DEFAULT 0)",
            "INSERT INTO item (id) VALUES (1), (2), (3)")
        let db = temp.db
        var returned: [Int64] = []
        try db.write { tx in
            try tx.forEachRow(
                sql: "UPDATE item SET attempts = attempts + 1 WHERE id >= ? RETURNING attempts", [2], table: "item"
            ) { returned.append($0.integer(0) ?? -1) }
        }
        #expect(returned == [1, 1])
        #expect(try db.fetchAll(sql: "SELECT SUM(attempts) AS s FROM item").first?["s"] == 2)
        // A constraint failure while stepping names the table it was given.
        let error = #expect(throws: GQLError.self) {
            try db.write { tx in
                try tx.forEachRow(sql: "UPDATE item SET attempts = NULL RETURNING id", [], table: "item") { _ in }
            }
        }
        #expect(error?.table == "item")
        #expect(try db.fetchAll(sql: "SELECT SUM(attempts) AS s FROM item").first?["s"] == 2)
    }

    /// The form that stops: no row past the one `body` said stop at is read, the statement is reset there (the
    /// same statement runs again from its start), and it says whether every row was read.
    @Test func stopsAtTheRowItIsToldToAndSaysWhetherItReadThemAll() throws {
        let temp = try Self.items(
            "CREATE TABLE item (id INTEGER PRIMARY KEY)", "INSERT INTO item (id) VALUES (1), (2), (3), (4), (5)")
        let sql = "SELECT id FROM item WHERE id >= ? ORDER BY id"
        var ids: [Int64] = []
        var ended: [Bool] = []
        try temp.db.read { tx in
            ended.append(
                try tx.forEachRowWhile(sql: sql, [2], table: "item") { row in
                    ids.append(row.integer(0) ?? -1)
                    return ids.count < 2
                })
            ended.append(
                try tx.forEachRowWhile(sql: sql, [4], table: "item") { row in
                    ids.append(row.integer(0) ?? -1)
                    return true
                })
        }
        #expect(ids == [2, 3, 4, 5])
        #expect(ended == [false, true])
    }
}
