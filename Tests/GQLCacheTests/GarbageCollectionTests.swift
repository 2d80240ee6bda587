import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// `gc()`, the byte budget and statistics, on real SQLite files.
@Suite struct GarbageCollectionTests {
    static let feed = "query { feed { id title author { id name } } }"
    static let me = "query { me { id name } }"

    @Test func gcRemovesDanglingReferencesThenUnreachableRecords() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        try cache.write(Self.feed, data: StorageTests.data)
        try cache.write(Self.me, data: ["me": ["__typename": "User", "id": "a", "name": "Ada"]])
        try cache.write(
            "mutation { createNote { id title } }",
            data: ["createNote": ["__typename": "Note", "id": "9", "title": "Nine"]])
        #expect(try cache.statistics().types == ["Post": 2, "User": 1, "Note": 1, "QUERY_ROOT": 1, "MUTATION_ROOT": 1])
        // Nothing dangles and everything but the mutation's answer is reachable.
        try cache.evict(key: "Post:2")
        let report = try cache.gc()
        // The feed pointed at Post:2: the field goes, and Post:1 with it; the mutation's records are not reachable.
        #expect(report == GQLCache.GarbageCollection(removedRecords: 3, removedReferences: 1))
        #expect(try cache.recordKeys() == ["QUERY_ROOT", "User:a"])
        #expect(try cache.read(Self.me)["me"]?["name"] == "Ada")
        let miss = #expect(throws: GQLError.self) { try cache.read(Self.feed) }
        #expect(miss?.code == .cacheMiss)
        // The file agrees, and a second collection finds nothing.
        let reopened = try GQLCache(path: path)
        #expect(try reopened.recordKeys() == ["QUERY_ROOT", "User:a"])
        #expect(try reopened.gc() == GQLCache.GarbageCollection(removedRecords: 0, removedReferences: 0))
    }

    @Test func gcRemovesAnUnreadableRow() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = try StorageTests.writtenFile(in: directory)
        try GQLDatabase(path: path).execute("UPDATE _gqlcache_records SET fields = '{not json' WHERE key = 'Post:2'")
        let cache = try GQLCache(path: path)
        let report = try cache.gc()
        // The damaged row goes, and the feed's reference to it.
        #expect(report.removedRecords >= 1 && report.removedReferences == 1)
        #expect(try !cache.recordKeys().contains("Post:2"))
    }

    /// The answer of `GetNote` for note `id`.
    static func note(_ id: Int) -> GQLValue {
        [
            "getNote": [
                "__typename": "Note", "id": .string("\(id)"), "title": .string("Title \(id)"), "n": .int(Int64(id)),
            ]
        ]
    }

    /// The bytes of four notes, measured on a cache without a budget, less one: a budget that holds three and
    /// all but the last byte of the fourth, so the fourth write trims (to 90%: one note less is enough).
    static func budgetOfAlmostFourNotes() throws -> Int {
        let measure = try memoryCache()
        for id in 1...4 { try measure.write("GetNote", ["id": "\(id)"], data: note(id)) }
        return try measure.statistics().bytes - 1
    }

    @Test func aByteBudgetTrimsTheLeastRecentlyUsedRecords() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let note = Self.note
        let budget = try Self.budgetOfAlmostFourNotes()
        let clock = TestClock()
        var configuration = GQLCache.Configuration()
        configuration.queries = try cacheTestQueries()
        configuration.clock = clock.clock
        configuration.maximumBytes = budget
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path, configuration: configuration)
        for id in 1...3 {
            try cache.write("GetNote", ["id": "\(id)"], data: note(id))
            clock.advance(seconds: 1)
        }
        #expect(try cache.recordKeys().count == 4)
        _ = try cache.read("GetNote", ["id": "1"])  // Note:1 is now the most recently read note.
        // A read writes nothing by itself: its time waits in memory for the next write.
        let before = try GQLDatabase(path: path).fetchAll(
            sql: "SELECT key FROM _gqlcache_records WHERE read_at IS NOT NULL")
        #expect(before.isEmpty)
        clock.advance(seconds: 1)
        try cache.write("GetNote", ["id": "4"], data: note(4))
        let keys = try cache.recordKeys()
        #expect(!keys.contains("Note:2"), "\(keys)")  // the least recently used goes first
        #expect(keys == ["Note:1", "Note:3", "Note:4", "QUERY_ROOT"], "\(keys)")
        #expect(try cache.statistics().bytes <= budget / 10 * 9)
        // The read time reached the file with the write: a reopened cache trims the same way.
        let times = try GQLDatabase(path: path).fetchAll(
            sql: "SELECT key FROM _gqlcache_records WHERE read_at IS NOT NULL ORDER BY key")
        #expect(times.compactMap { $0["key"]?.stringValue } == ["Note:1", "QUERY_ROOT"])
    }

    /// A write that fails (a value too deep to store: its transaction rolls back) keeps the read times it took
    /// to write: the next write records them, and the byte budget spares a record just read.
    @Test func aFailedWriteKeepsTheReadTimesTheBudgetGoesBy() throws {
        let clock = TestClock()
        let budget = try Self.budgetOfAlmostFourNotes()
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maximumBytes = budget
        }
        for id in 1...3 {
            try cache.write("GetNote", ["id": "\(id)"], data: Self.note(id))
            clock.advance(seconds: 1)
        }
        _ = try cache.read("GetNote", ["id": "1"])  // Note:1 is now the most recently read note.
        clock.advance(seconds: 1)
        let deep: GQLValue = ["getNote": ["__typename": "Note", "id": "5", "meta": RecordFormatTests.nestedLists(512)]]
        #expect {
            try cache.write(#"query { getNote(id: "5") { id meta } }"#, data: deep)
        } throws: { error in
            (error as? GQLError)?.code == .recordTooDeep
        }
        clock.advance(seconds: 1)
        try cache.write("GetNote", ["id": "4"], data: Self.note(4))
        let keys = try cache.recordKeys()
        #expect(keys == ["Note:1", "Note:3", "Note:4", "QUERY_ROOT"], "\(keys)")
    }
}
