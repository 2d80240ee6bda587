import Foundation
import Testing

@testable import GQLStore

/// GQLStore's one process-wide SQLite setting, made before the process's first connection.
@Suite struct SQLiteSetupTests {
    /// SQLite's memory statistics are off (every allocation SQLite makes would otherwise take a process-wide mutex),
    /// and reads go on as before. Every connection of this test process is GQLStore's, so the first one opened set it.
    @Test func memoryStatisticsAreOffOnceAConnectionIsOpen() throws {
        let temp = try TempDatabase()
        try temp.db.write { tx in
            try tx.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, t TEXT)")
            try tx.execute("INSERT INTO item (id, t) VALUES (1, 'one'), (2, 'two')")
        }
        var texts: [String?] = []
        try temp.db.read { tx in
            try tx.forEachRow(sql: "SELECT t FROM item ORDER BY id", [], table: "item") { texts.append($0.text(0)) }
        }
        #expect(texts == ["one", "two"])
        #expect(Connection.memoryStatisticsOff)
    }
}
