import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// `recordKeys()`, `statistics()`, `gc()`, the byte budget, `evict` and `clear` on a damaged cache file (rows
/// written through SQLite, in a record table remade without its constraints): rows that are not records (a key
/// that is a BLOB, NULL, a number, or text that is not UTF-8) are counted apart and never read repaired, records
/// whose fields do not read are left to `gc()`, and the good records work as before.
@Suite struct DamagedFileTests {
    /// The feed's four records, a record whose key is U+FFFD (what a key that is not UTF-8 read as, repaired),
    /// five records whose fields do not read and seven rows that are not records.
    static func damagedFile(in directory: TemporaryDirectory) throws -> String {
        let path = try StorageTests.writtenFile(in: directory)
        let db = try GQLDatabase(path: path)
        // The table remade as an altered file could hold it: a rowid table (its primary key takes NULL), the key
        // and the fields of any type (no text affinity to turn a number into text), fields that may be NULL.
        try db.execute("CREATE TABLE remade (key PRIMARY KEY, fields, updated_at REAL NOT NULL, read_at REAL)")
        try db.execute("INSERT INTO remade SELECT key, fields, updated_at, read_at FROM _gqlcache_records")
        try db.execute("DROP TABLE _gqlcache_records")
        try db.execute("ALTER TABLE remade RENAME TO _gqlcache_records")
        let post = "(SELECT fields FROM _gqlcache_records WHERE key = 'Post:1')"
        for (key, fields) in [
            // Not records: a BLOB twin of a record's key, a BLOB, NULL, a number, text that is not UTF-8 (two
            // that repair to the same U+FFFD, one that sorts after its repaired form).
            ("CAST('Post:1' AS BLOB)", post), ("x'00FF'", post), ("NULL", "x'0100'"), ("42", post),
            ("CAST(x'FF' AS TEXT)", post), ("CAST(x'FE' AS TEXT)", post), ("CAST(x'F828' AS TEXT)", post),
            // A record under the text those repair to (valid UTF-8), unreachable.
            ("CAST(x'EFBFBD' AS TEXT)", post),
            // Records whose fields do not read: NULL, a number, a JSON list, bytes of no record, JSON that is
            // not UTF-8.
            ("'Note:null'", "NULL"), ("'Note:int'", "42"), ("'Note:list'", "'[1, 2]'"), ("'Note:bad'", "x'FF00'"),
            ("'Note:badjson'", #"CAST(x'7B2261223A22FF227D' AS TEXT)"#),
        ] {
            try db.execute("INSERT INTO _gqlcache_records (key, fields, updated_at) VALUES (\(key), \(fields), 0)")
        }
        try db.close()
        return path
    }

    static let goodKeys = ["Post:1", "Post:2", "QUERY_ROOT", "User:a"]
    static let unreadable = ["Note:bad", "Note:badjson", "Note:int", "Note:list", "Note:null"]

    /// Rows in the file: all of them, and those whose key is not text.
    static func rows(_ cache: GQLCache) throws -> (all: Int, notText: Int) {
        let counts = try cache.database.fetchAll(
            sql: "SELECT count(*) AS n, IFNULL(sum(typeof(key) != 'text'), 0) AS other FROM _gqlcache_records")
        return (Int(counts.first?["n"]?.intValue ?? -1), Int(counts.first?["other"]?.intValue ?? -1))
    }

    @Test func keysAndStatisticsCountTheRecordsAndTheDamagedRowsApart() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let cache = try GQLCache(path: try Self.damagedFile(in: directory))
        // In the table's (byte) order; the U+FFFD record once, not three times.
        #expect(try cache.recordKeys() == Self.unreadable + Self.goodKeys + ["\u{FFFD}"])
        let stats = try cache.statistics()
        #expect(stats.records == 10 && stats.damagedRows == 7, "\(stats)")
        #expect(stats.types["Post"] == 2 && stats.types["Note"] == 5 && stats.types.values.reduce(0, +) == 10)
        let bytes = try cache.database.fetchAll(
            sql: """
                SELECT sum(IFNULL(length(CAST(key AS BLOB)), 0) + IFNULL(length(CAST(fields AS BLOB)), 0)) AS b
                FROM _gqlcache_records
                """)
        #expect(bytes.first?["b"] == .int(Int64(stats.bytes)))
        // The good records read as before; the one whose JSON is not UTF-8 is a miss, not repaired.
        #expect(try cache.read(StorageTests.query) == StorageTests.data)
        #expect(try cache.record("Note:badjson") == nil && cache.record("Note:list") == nil)
    }

    @Test func gcRemovesTheDamagedRowsAndTheUnreadableRecordsAndCountsThem() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = try Self.damagedFile(in: directory)
        let cache = try GQLCache(path: path)
        // 7 rows that are not records, 5 records that do not read, and the unreachable U+FFFD record.
        #expect(try cache.gc() == GQLCache.GarbageCollection(removedRecords: 13, removedReferences: 0))
        #expect(try cache.recordKeys() == Self.goodKeys)
        #expect(try Self.rows(cache) == (4, 0))
        #expect(try cache.read(StorageTests.query) == StorageTests.data)
        #expect(try GQLCache(path: path).gc() == GQLCache.GarbageCollection(removedRecords: 0, removedReferences: 0))
    }

    @Test func evictRemovesTheTextKeyOnlyAndClearRemovesEveryRow() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let cache = try GQLCache(path: try Self.damagedFile(in: directory))
        #expect(try cache.evict(key: "Post:1"))
        #expect(try !cache.evict(key: "Post:1"))  // Its BLOB twin is not a record: left to gc and clear.
        #expect(try cache.evict(key: "Note:null"))
        let stats = try cache.statistics()
        #expect(stats.records == 8 && stats.damagedRows == 7, "\(stats)")
        #expect(try Self.rows(cache) == (15, 4))
        try cache.clear()
        #expect(try Self.rows(cache) == (0, 0))
        #expect(try cache.statistics() == GQLCache.Statistics(records: 0, bytes: 0, types: [:], damagedRows: 0))
    }

    /// Under a byte budget, the first write removes the rows that are not records, then trims the good ones by
    /// use as ever; the total it keeps to is the file's.
    @Test func theByteBudgetRemovesTheDamagedRowsAndTrimsTheRest() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = try Self.damagedFile(in: directory)
        // A clock past the file's times: what this test writes is the most recently used.
        let clock = TestClock()
        var configuration = GQLCache.Configuration()
        configuration.clock = clock.clock
        configuration.maximumBytes = 1_000_000
        let roomy = try GQLCache(path: path, configuration: configuration)
        let me = "query { me { id name } }"
        try roomy.write(me, data: ["me": ["__typename": "User", "id": "b", "name": "Bea"]])
        #expect(try roomy.statistics().damagedRows == 0)
        #expect(try Self.rows(roomy) == (11, 0))
        #expect(try roomy.recordKeys() == Self.unreadable + Self.goodKeys + ["User:b", "\u{FFFD}"])
        // A budget that holds twice the two records written last, and not the whole file: the records least
        // recently used go until 90% of it is left.
        let newest = try roomy.database.fetchAll(
            sql: """
                SELECT sum(length(CAST(key AS BLOB)) + length(fields)) AS b FROM _gqlcache_records
                WHERE key IN ('QUERY_ROOT', 'User:b')
                """)
        let budget = Int(newest.first?["b"]?.intValue ?? 0) * 2
        let total = try roomy.statistics().bytes
        try #require(budget > 0 && budget / 10 * 9 < total, "budget \(budget), total \(total)")
        try roomy.database.close()
        configuration.maximumBytes = budget
        clock.advance(seconds: 1)
        let tight = try GQLCache(path: path, configuration: configuration)
        try tight.write(me, data: ["me": ["__typename": "User", "id": "b", "name": "Bee"]])
        let stats = try tight.statistics()
        #expect(stats.bytes <= budget / 10 * 9 && stats.damagedRows == 0, "\(stats)")
        #expect(try tight.read(me)["me"]?["name"] == "Bee")
        #expect(try tight.recordKeys().allSatisfy { !$0.hasPrefix("Note:") && $0 != "\u{FFFD}" })
    }

    /// A file from before the binary format (migration step 3 not applied) holding a JSON row whose key is not
    /// UTF-8 and sorts after its repaired form: the conversion walked back to it for ever; now it opens, converts
    /// every other row and leaves that one as it is.
    @Test func theConversionOfAnOldFilePassesAKeyThatIsNotUTF8() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        try RecordFormatTests.jsonRowsFile(path, notes: 3)
        let old = try GQLDatabase(path: path)
        try old.execute(
            #"INSERT INTO _gqlcache_records (key, fields, updated_at) VALUES (CAST(x'F828' AS TEXT), '{"a": 1}', 0)"#)
        try old.close()
        let cache = try GQLCache(path: path)
        let kinds = try cache.database.fetchAll(
            sql: "SELECT hex(key) AS key, typeof(fields) AS kind FROM _gqlcache_records WHERE typeof(fields) = 'text'")
        #expect(kinds == [["key": "F828", "kind": "text"]])
        #expect(try cache.read("query { notes { id title } }")["notes"]?.arrayValue?.count == 3)
        #expect(try cache.statistics().damagedRows == 1)
    }
}
