import CSQLite
import Foundation
import Testing

@testable import GQLStore

/// SQLite's process-wide setting is the app's to make (``GQLDatabase/configureSQLiteProcess(memoryStatistics:)``),
/// never GQLStore's. Each check holds whatever ran before it in this process: the test opens a database first, so
/// SQLite is initialized however the tests are ordered.
@Suite struct SQLiteSetupTests {
    /// Opening databases leaves SQLite's memory statistics as they were (on, SQLite's default: SQLite counts the
    /// memory of the open connection), and the setting asked for once SQLite is in use is refused, changing nothing.
    @Test func connectionsLeaveTheSettingAloneAndALateCallIsRefused() throws {
        let temp = try TempDatabase()
        try temp.db.write { tx in
            try tx.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, t TEXT)")
            try tx.execute("INSERT INTO item (id, t) VALUES (1, 'one'), (2, 'two')")
        }
        #expect(sqlite3_memory_used() > 0, "GQLStore's connections did not turn SQLite's memory statistics off")
        #expect(!GQLDatabase.configureSQLiteProcess(memoryStatistics: false), "SQLite is initialized: refused")
        #expect(sqlite3_memory_used() > 0, "the refused call changed nothing")
        var texts: [String?] = []
        try temp.db.read { tx in
            try tx.forEachRow(sql: "SELECT t FROM item ORDER BY id", [], table: "item") { texts.append($0.text(0)) }
        }
        #expect(texts == ["one", "two"])
    }
}
