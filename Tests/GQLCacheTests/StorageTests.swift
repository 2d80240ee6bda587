import Foundation
import GQLTestSupport
import Testing

@testable import GQLCache

/// Records in real SQLite files: reopened, shared with the app's database, read cold.
@Suite struct StorageTests {
    static let query = "query { feed { id title author { id name } } }"
    static let data: GQLValue = [
        "feed": [
            [
                "__typename": "Post", "id": "1", "title": "One",
                "author": ["__typename": "User", "id": "a", "name": "Ada"],
            ],
            [
                "__typename": "Post", "id": "2", "title": "Two",
                "author": ["__typename": "User", "id": "a", "name": "Ada"],
            ],
        ]
    ]

    /// A cache file in `directory` holding ``data``, closed; its path.
    static func writtenFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        try cache.write(query, data: data)
        try cache.database.close()
        return path
    }

    @Test func aReopenedCacheReadsTheSameAnswers() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let reopened = try GQLCache(path: try Self.writtenFile(in: directory))
        #expect(try reopened.read(Self.query) == Self.data)
        #expect(try reopened.recordKeys() == ["Post:1", "Post:2", "QUERY_ROOT", "User:a"])
    }

    /// A write puts its rows in the table's key order (review L10): SQLite orders TEXT keys by their UTF-8 bytes,
    /// which String's `<` does not for keys out of NFC (`e` + U+0301 + `x` sorts before `é` by bytes, after it
    /// as Strings). The write's sort (RecordStore.keyOrder) gives the order SQLite lists the keys in.
    @Test func aWritesKeyOrderIsTheTablesByteOrder() throws {
        let cache = try memoryCache()
        let ids = ["\u{e9}", "e\u{301}x", "Z", "a", "\u{1F600}", "\u{FFFD}", "ab", "\u{7F}"]
        let written = try cache.write(
            objects: ids.map { ["__typename": "Note", "id": .string($0)] }, typename: "Note", keyField: "id")
        #expect(written == ids.count)
        let listed = try cache.recordKeys()  // SELECT key … ORDER BY key
        #expect(listed.count == ids.count)
        #expect(listed != listed.sorted(), "the keys should tell byte order from String order")
        for keys in [listed, listed.filter { $0.utf8.allSatisfy { $0 < 0x80 } }] {
            let records: NormalizedRecords = keys.reversed().map { (key: RecordKey($0), fields: GQLValues()) }
            #expect(RecordStore.keyOrder(records).map { records[$0].key } == keys.map { RecordKey($0) })
        }
    }

    @Test func theAppsDatabaseKeepsItsOwnVersion() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let db = try GQLDatabase(path: directory.path("app.sqlite"))
        var migrator = GQLMigrator()
        migrator.step(1, "app table") { tx in try tx.execute("CREATE TABLE Thing (id INTEGER PRIMARY KEY)") }
        try migrator.migrate(db)
        let cache = try GQLCache(database: db)
        try cache.write(Self.query, data: Self.data)
        #expect(try GQLMigrator.version(of: db) == 1)
        #expect(try GQLMigrator(namespace: "gqlcache").appliedVersion(db) == 3)
        // A second cache on the same database (another launch) finds the table made.
        let again = try GQLCache(database: db)
        #expect(try again.read(Self.query) == Self.data)
    }

    @Test func aDamagedRecordIsAMissNotACrash() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = try Self.writtenFile(in: directory)
        try GQLDatabase(path: path).execute("UPDATE _gqlcache_records SET fields = '{not json' WHERE key = 'User:a'")
        let reopened = try GQLCache(path: path)
        let miss = #expect(throws: GQLError.self) { try reopened.read(Self.query) }
        #expect(miss?.code == .cacheMiss && miss?.message.contains("User:a") == true)
        try reopened.write(Self.query, data: Self.data)
        #expect(try reopened.read(Self.query) == Self.data)
    }

    @Test func concurrentWritesAndReadsAgree() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let cache = try GQLCache(path: directory.path("cache.sqlite"))
        let query = "query($id: ID!) { note(id: $id) { id v } }"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for round in 0..<25 {
                        try cache.write(
                            query, ["id": "n\(round % 5)"],
                            data: [
                                "note": [
                                    "__typename": "Note", "id": .string("n\(round % 5)"),
                                    "v": .int(Int64(writer * 100 + round)),
                                ]
                            ])
                        _ = try? cache.read(query, ["id": "n\(round % 5)"])
                    }
                }
            }
            try await group.waitForAll()
        }
        // The memory layer and the file hold the same records.
        let reopened = try GQLCache(path: directory.path("cache.sqlite"))
        for id in 0..<5 {
            #expect(try cache.read(query, ["id": "n\(id)"]) == reopened.read(query, ["id": "n\(id)"]))
        }
    }

    /// A write merges its fields into the stored record whether the memory layer holds it or not: after the
    /// memory layer dropped records (a small limit), and on a reopened file (whose records are only in SQLite).
    @Test func writesMergeWithRecordsTheMemoryLayerDoesNotHold() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        var configuration = GQLCache.Configuration()
        configuration.memoryLimit = 4
        let small = try GQLCache(path: path, configuration: configuration)
        let titled = "query($id: ID!) { note(id: $id) { id title } }"
        let bodied = "query($id: ID!) { note(id: $id) { id body } }"
        let both = "query($id: ID!) { note(id: $id) { title body } }"
        for id in 1...20 {
            let note: GQLValue = ["__typename": "Note", "id": .string("\(id)"), "title": .string("t\(id)")]
            try small.write(titled, ["id": "\(id)"], data: ["note": note])
        }
        try small.write(bodied, ["id": "1"], data: ["note": ["__typename": "Note", "id": "1", "body": "b1"]])
        #expect(try small.read(both, ["id": "1"]) == ["note": ["__typename": "Note", "title": "t1", "body": "b1"]])
        try small.database.close()
        let reopened = try GQLCache(path: path)
        try reopened.write(bodied, ["id": "2"], data: ["note": ["__typename": "Note", "id": "2", "body": "b2"]])
        #expect(try reopened.read(both, ["id": "2"]) == ["note": ["__typename": "Note", "title": "t2", "body": "b2"]])
        #expect(try GQLCache(path: path).read(both, ["id": "1"])["note"]?["body"] == "b1")
    }

    /// A cold read of more records than the memory layer keeps: what it loads trims the memory layer under it,
    /// and the answer is still whole (the read keeps what it loaded and what it found in memory).
    @Test func aReadLargerThanTheMemoryLayerReadsEveryRecord() throws {
        var configuration = GQLCache.Configuration()
        configuration.memoryLimit = 4
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let feed: GQLValue = [
            "feed": .array(
                (1...12).map { id in
                    [
                        "__typename": "Post", "id": .string("\(id)"), "title": .string("T\(id)"),
                        "author": ["__typename": "User", "id": .string("u\(id % 5)"), "name": .string("U\(id % 5)")],
                    ]
                })
        ]
        let cache = try GQLCache(path: path, configuration: configuration)
        try cache.write(Self.query, data: feed)
        // Warm (part of it in memory) and cold (a fresh cache on the file).
        #expect(try cache.read(Self.query) == feed)
        #expect(try cache.read(Self.query) == feed)
        #expect(try GQLCache(path: path, configuration: configuration).read(Self.query) == feed)
    }

    /// A cold read of a level that takes three statements (500 keys each), each batch's rows decoded before the
    /// next batch is read: 1,200 posts of about 1 KB each, read back whole from a fresh cache on the file.
    @Test func aColdReadOfALevelInSeveralBatchesReadsEveryRecord() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let title = String(repeating: "t", count: 1_000)
        let feed: GQLValue = [
            "feed": .array(
                (1...1_200).map { id in
                    [
                        "__typename": "Post", "id": .string("\(id)"), "title": .string("\(id) \(title)"),
                        "author": ["__typename": "User", "id": .string("u\(id % 7)"), "name": .string("U\(id % 7)")],
                    ]
                })
        ]
        try GQLCache(path: path).write(Self.query, data: feed)
        #expect(try GQLCache(path: path).read(Self.query) == feed)
    }

    /// A cold read walks the table in key order: it steps over rows it does not want (a few in a row, then it
    /// seeks), passes keys that are not in the table, and meets keys in SQLite's byte order, which is not
    /// Swift's for a decomposed accent (`e` + U+0301 sorts before `f` in bytes, after it in Swift) and puts a key
    /// with a NUL byte where its bytes say.
    @Test func aColdReadStepsOverRowsItDoesNotWantAndMeetsKeysInByteOrder() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        func post(_ id: String) -> GQLValue {
            [
                "__typename": "Post", "id": .string(id), "title": .string("T\(id)"),
                "author": ["__typename": "User", "id": .string("u\(id.utf8.count % 7)"), "name": "U"],
            ]
        }
        let odd = ["e\u{301}", "f", "a\u{0}b", "\u{3A9}", "\"q\".:x", "z"]
        let ids = (0..<300).map { String(format: "%03d", $0) }
        let feed: GQLValue = ["feed": .array((ids + odd).map(post))]
        // Every 10th post (9 rows stepped over between two: more than a walk steps before it seeks), then every
        // 3rd (2 rows: stepped), then the odd ids.
        let picked =
            stride(from: 0, to: 150, by: 10).map { ids[$0] } + stride(from: 150, to: 300, by: 3).map { ids[$0] }
        let picks: GQLValue = ["picks": .array((picked + odd).map(post))]
        let picksQuery = "query { picks { id title author { id name } } }"
        let cache = try GQLCache(path: path)
        try cache.write(Self.query, data: feed)
        try cache.write(picksQuery, data: picks)
        #expect(try GQLCache(path: path).read(picksQuery) == picks)
        #expect(try GQLCache(path: path).read(Self.query) == feed)
        // A record the walk passes by (not in the table) is a miss that names its field.
        #expect(try cache.evict(key: "Post:159"))
        let miss = #expect(throws: GQLError.self) { try GQLCache(path: path).read(picksQuery) }
        #expect(miss?.code == .cacheMiss && miss?.message.contains("`picks.18`") == true)
    }

    /// A cold read takes each level's records from the rows it loaded, at their keys' places: a key met twice in
    /// one level (an author of several posts) is loaded once, and both places read on through its selections
    /// (the author's mentor and the mentor's own), as does a record found already loaded (a mentor who is also
    /// an author).
    @Test func aKeyMetTwiceInALevelIsReadThroughAtEveryPlace() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let query = "query { feed { id author { id name mentor { id name mentor { id } } } } }"
        func user(_ id: Int) -> GQLValue {
            [
                "__typename": "User", "id": .string("u\(id)"), "name": .string("U\(id)"),
                "mentor": [
                    "__typename": "User", "id": .string("u\((id + 1) % 3)"), "name": .string("U\((id + 1) % 3)"),
                    "mentor": ["__typename": "User", "id": .string("u\((id + 2) % 3)")],
                ],
            ]
        }
        let feed: GQLValue = [
            "feed": .array((1...9).map { ["__typename": "Post", "id": .string("\($0)"), "author": user($0 % 3)] })
        ]
        try GQLCache(path: path).write(query, data: feed)
        #expect(try GQLCache(path: path).read(query) == feed)
    }
}
