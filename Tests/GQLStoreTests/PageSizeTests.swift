import Foundation
import GQLTestSupport
import Testing

@testable import GQLStore

/// ``GQLDatabase/Configuration/pageSize``: a file the database creates gets it, a file that has pages keeps its own,
/// and a size SQLite cannot use is refused before anything is opened.
@Suite struct PageSizeTests {
    static func integer(_ db: GQLDatabase, _ sql: String) throws -> Int64? {
        try db.read { tx in
            var value: Int64?
            try tx.forEachRow(sql: sql, [], table: nil) { value = $0.integer(0) }
            return value
        }
    }

    static func text(_ db: GQLDatabase, _ sql: String) throws -> String? {
        try db.read { tx in
            var value: String?
            try tx.forEachRow(sql: sql, [], table: nil) { value = $0.text(0) }
            return value
        }
    }

    static func pageSize(_ db: GQLDatabase) throws -> Int64? { try integer(db, "PRAGMA page_size") }

    static func configuration(_ size: Int?) -> GQLDatabase.Configuration {
        var configuration = GQLDatabase.Configuration()
        configuration.pageSize = size
        return configuration
    }

    @Test func aNewFileGetsThePageSizeAndKeepsItWhenReopened() throws {
        let directory = try TemporaryDirectory(prefix: "gqlstore-pagesize")
        defer { directory.cleanup() }
        let path = directory.path("db.sqlite")
        let db = try GQLDatabase(path: path, configuration: Self.configuration(16_384))
        try db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, t TEXT)")
        try db.execute("INSERT INTO item (id, t) VALUES (1, 'one')")
        #expect(try Self.pageSize(db) == 16_384)
        try db.close()
        // Reopened asking for another size (or none): the file keeps the size it was created with, in WAL mode.
        for size in [8_192, nil] {
            let again = try GQLDatabase(path: path, configuration: Self.configuration(size))
            #expect(try Self.pageSize(again) == 16_384)
            #expect(try Self.text(again, "PRAGMA journal_mode") == "wal")
            #expect(try Self.text(again, "SELECT t FROM item WHERE id = 1") == "one")
            try again.close()
        }
    }

    @Test func aFileCreatedWithSQLitesSizeKeepsIt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlstore-pagesize")
        defer { directory.cleanup() }
        let path = directory.path("db.sqlite")
        let db = try GQLDatabase(path: path)
        try db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, t TEXT)")
        try db.execute("INSERT INTO item (id, t) VALUES (1, 'one')")
        try db.close()
        let reopened = try GQLDatabase(path: path, configuration: Self.configuration(65_536))
        #expect(try Self.pageSize(reopened) == 4_096)
        try reopened.execute("INSERT INTO item (id, t) VALUES (2, 'two')")
        #expect(try Self.integer(reopened, "SELECT count(*) FROM item") == 2)
        try reopened.close()
    }

    @Test func aSizeSQLiteCannotUseIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "gqlstore-pagesize")
        defer { directory.cleanup() }
        for size in [0, 256, 1_000, 131_072] {
            let path = directory.path("db-\(size).sqlite")
            #expect {
                _ = try GQLDatabase(path: path, configuration: Self.configuration(size))
            } throws: { error in
                (error as? GQLError)?.code == .invalidArgument && "\(error)".contains("page size \(size)")
            }
            #expect(!FileManager.default.fileExists(atPath: path), "nothing was created for \(size)")
        }
    }
}
