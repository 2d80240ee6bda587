import Foundation
import GQLTestSupport
import Testing

@testable import GQLCache

/// The cache's own files have pages of ``GQLCache/filePageSize`` bytes; a file created before (4 KiB pages, SQLite's
/// default) opens, reads and takes writes as it did, keeping its pages.
@Suite struct PageSizeTests {
    static func pageSize(_ cache: GQLCache) throws -> Int64? {
        try cache.database.read { tx in
            var size: Int64?
            try tx.forEachRow(sql: "PRAGMA page_size", [], table: nil) { size = $0.integer(0) }
            return size
        }
    }

    @Test func aFileTheCacheCreatesHasItsPageSizeAndReopens() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache-pagesize")
        defer { directory.cleanup() }
        let path = try StorageTests.writtenFile(in: directory)
        let reopened = try GQLCache(path: path)
        #expect(try Self.pageSize(reopened) == Int64(GQLCache.filePageSize))
        #expect(try reopened.read(StorageTests.query) == StorageTests.data)
    }

    @Test func aFileWithSQLitesDefaultPagesKeepsThemAndReadsAsBefore() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache-pagesize")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        // Written as before this page size: the database opened with SQLite's default.
        let database = try GQLDatabase(path: path)
        try GQLCache(database: database).write(StorageTests.query, data: StorageTests.data)
        try database.close()
        let reopened = try GQLCache(path: path)
        #expect(try Self.pageSize(reopened) == 4_096)
        #expect(try reopened.read(StorageTests.query) == StorageTests.data)
        let renamed: GQLValue = [
            "feed": [
                [
                    "__typename": "Post", "id": "1", "title": "Uno",
                    "author": ["__typename": "User", "id": "a", "name": "Ada"],
                ]
            ]
        ]
        try reopened.write(StorageTests.query, data: renamed)
        try reopened.database.close()
        let again = try GQLCache(path: path)
        #expect(try again.read(StorageTests.query) == renamed)
        #expect(try Self.pageSize(again) == 4_096)
    }
}
