import Foundation
import GQLCache
import GQLCore
import GQLTestSupport
import Testing

/// Records stored in RecordCodec's binary form: every value round-trips, damaged bytes are refused rather than
/// crashing, and a cache file of JSON text rows (an older release's) is converted when it opens.
@Suite struct RecordFormatTests {
    static let record: GQLValues = [
        "__typename": "Post", "id": "p:1.ü", "title": "Grüße, 世界 😀", "empty": "", "none": .null,
        "yes": true, "no": false, "min": .int(.min), "max": .int(.max), "zero": 0, "negative": -5,
        "pi": .double(3.141_592_653_589_793), "tiny": .double(-0.0), "huge": .double(1e308),
        "blob": .data(Data([0, 255, 7])), "tags": ["a", ["b", .null], []],
        "author": ["__ref": "User:a"], "json": ["__value": ["z": 1, "a": ["__ref": "not a reference here"]]],
        "__received": ["title": .double(1_800_000_000.5)], "last": [:],
    ]

    static func decode(_ bytes: [UInt8]) -> GQLValues? {
        bytes.withUnsafeBytes { RecordCodec.decode($0) }
    }

    @Test func everyValueRoundTripsInOrder() throws {
        let bytes = try RecordCodec.encode(Self.record, key: "Post:1")
        let decoded = try #require(Self.decode(bytes))
        #expect(decoded == Self.record)
        #expect(decoded.keys == Self.record.keys)
        #expect(decoded["json"]?["__value"]?.objectValue?.keys == ["z", "a"])
        #expect(Self.decode(try RecordCodec.encode([:], key: "empty")) == [:])
        // Smaller than the JSON text of the same record.
        #expect(bytes.count < (try GQLValue.object(Self.record).jsonString()).utf8.count)
    }

    @Test func aReusedBufferHoldsEachRecordAtItsStart() throws {
        // Sizes at the varint's byte boundaries: the size worked out before writing must be exact.
        var edges = GQLValues()
        for length in [0, 1, 127, 128, 16_383, 16_384] {
            edges["s\(length)"] = .string(String(repeating: "é", count: length / 2) + (length % 2 == 1 ? "x" : ""))
        }
        for number in [63, 64, -64, -65, 8_191, 8_192, -8_192, -8_193] { edges["i\(number)"] = .int(Int64(number)) }
        edges["list"] = .array(Array(repeating: .null, count: 128))
        var buffer: [UInt8] = []
        for record in [edges, Self.record, ["__typename": "User", "id": "1"]] {
            let alone = try RecordCodec.encode(record, key: "Edge:1")
            let before = buffer.count
            let count = try RecordCodec.encode(record, key: "Edge:1", into: &buffer)
            #expect(count == alone.count)
            #expect(buffer.count == max(before, count))  // grows when too small, never shrinks
            #expect(Array(buffer[..<count]) == alone)
            #expect(Self.decode(alone) == record)
        }
    }

    @Test func damagedBytesAreRefusedNeverACrash() throws {
        let bytes = try RecordCodec.encode(Self.record, key: "Post:1")
        // Every cut is refused.
        for length in 0..<bytes.count {
            #expect(Self.decode(Array(bytes[0..<length])) == nil, "cut at \(length)")
        }
        // Trailing bytes, another format, a count past the end.
        #expect(Self.decode(bytes + [0]) == nil)
        #expect(Self.decode([2] + bytes.dropFirst()) == nil)
        #expect(Self.decode([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) == nil)
        #expect(Self.decode([1, 1, 1, 0x61, 5] + Array(repeating: 0xFF, count: 9) + [0x01]) == nil)
        // Bytes that are not UTF-8 (C3 starts a two-byte sequence, 28 cannot continue it), in a value and in a
        // name, are refused rather than read as U+FFFD.
        #expect(Self.decode([1, 1, 1, 0x61, 5, 2, 0xC3, 0x28]) == nil)
        #expect(Self.decode([1, 1, 2, 0xC3, 0x28, 0]) == nil)
        #expect(Self.decode([1, 1, 1, 0x61, 5, 2, 0xC3, 0xA9])?["a"] == "é")
        // A tenth varint byte holds the 64th bit alone: more bits there are refused, not dropped.
        #expect(Self.decode([1, 1, 1, 0x61, 3] + Array(repeating: 0xFF, count: 9) + [0x02]) == nil)
        #expect(Self.decode([1, 1, 1, 0x61, 3] + Array(repeating: 0xFF, count: 9) + [0x01])?["a"] == .int(.min))
        // Nesting deeper than the limit (arrays of one array) is refused; within it, read.
        func nested(_ depth: Int) -> [UInt8] {
            [1, 1, 1, 0x61] + Array(repeating: [UInt8]([7, 1]), count: depth).flatMap { $0 } + [7, 0]
        }
        #expect(Self.decode(nested(100_000)) == nil)
        #expect(Self.decode(nested(100))?["a"] != nil)
        // Random flips: whatever they decode to, they decode (or are refused) without trapping.
        var random = SplitMix64(seed: TestSeed.make("record flips"))
        for _ in 0..<2_000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(random.next() % 4)) {
                damaged[Int(random.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            _ = Self.decode(damaged)
        }
    }

    @Test func keysThatAreNotTextEndAColdRead() throws {
        // A damaged or altered file: rows whose key is a BLOB, which SQLite sorts after every text key. A cold read
        // of a key not in the table walked onto them and sought the same key again forever (review H1).
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let database = try GQLDatabase(path: path)
        _ = try GQLCache(database: database)
        try database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
            INSERT INTO _gqlcache_records (key, fields, updated_at) SELECT CAST('Note:' || i AS BLOB), x'0100', 0 FROM n
            """)
        #expect(
            try database.fetchAll(sql: "SELECT count(*) AS n FROM _gqlcache_records WHERE typeof(key) = 'blob'")
                == [["n": 10]])
        try database.close()
        let query = "query { me { id name } }"
        let miss = #expect(throws: GQLError.self) { try GQLCache(path: path).read(query) }
        #expect(miss?.code == .cacheMiss)
        // Text keys are still read past them.
        try GQLCache(path: path).write(query, data: ["me": ["__typename": "User", "id": "a", "name": "Ada"]])
        #expect(try GQLCache(path: path).read(query)["me"]?["name"] == "Ada")
    }

    /// `depth` lists, one inside the other (the innermost empty).
    static func nestedLists(_ depth: Int) -> GQLValue {
        var value: GQLValue = []
        for _ in 1..<depth { value = [value] }
        return value
    }

    /// `depth` objects, one inside the other (the innermost empty).
    static func nestedObjects(_ depth: Int) -> GQLValue {
        var value: GQLValue = [:]
        for _ in 1..<depth { value = ["a": value] }
        return value
    }

    @Test func encodingRefusesWhatDecodingWouldRefuse() throws {
        // A record's fields sit at depth 1: 511 nested lists or objects decode, 512 do not, so they are not written.
        for deepest in [Self.nestedLists, Self.nestedObjects] {
            let within = try RecordCodec.encode(["a": deepest(RecordCodec.maximumDepth - 1)], key: "Deep:1")
            #expect(Self.decode(within)?["a"] == deepest(RecordCodec.maximumDepth - 1))
            #expect {
                try RecordCodec.encode(["ok": 1, "a": deepest(RecordCodec.maximumDepth)], key: "Deep:1")
            } throws: { error in
                let error = try #require(error as? GQLError)
                return error.code == .recordTooDeep && error.message.contains("field a of record Deep:1")
            }
        }
        // Far deeper: refused at the limit, not walked to the bottom.
        #expect(throws: GQLError.self) { try RecordCodec.encode(["a": Self.nestedLists(2_000)], key: "Deep:1") }
    }

    @Test func aWriteTooDeepToReadBackIsRefusedAndLeavesTheCacheAsItWas() async throws {
        let cache = try memoryCache()
        let query = "query { a: note(id: 1) { id meta } b: note(id: 2) { id title } }"
        func data(_ meta: GQLValue, _ title: String) -> GQLValue {
            [
                "a": ["__typename": "Note", "id": "1", "meta": meta],
                "b": ["__typename": "Note", "id": "2", "title": .string(title)],
            ]
        }
        // `meta` is a leaf at depth 1 of its record: 511 lists are read back whole.
        try cache.write(query, data: data(Self.nestedLists(511), "first"))
        #expect(try cache.read(query) == data(Self.nestedLists(511), "first"))
        // A watcher on a server it never asks (cacheOnly).
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")
        let watch = cache.watch(server, query, policy: .cacheOnly)
        var answers = watch.makeAsyncIterator()
        #expect(try await answers.next()?.data == data(Self.nestedLists(511), "first"))
        // One more level: the write throws, and nothing of it is stored (not even Note:2's new title).
        #expect {
            try cache.write(query, data: data(Self.nestedLists(512), "second"))
        } throws: { error in
            let error = try #require(error as? GQLError)
            return error.code == .recordTooDeep && error.message.contains("field meta of record Note:1")
        }
        #expect(try cache.read(query) == data(Self.nestedLists(511), "first"))
        #expect(try cache.record("Note:2")?["title"] == "first")
        // The watcher heard nothing: its next answer is the next write's.
        try cache.write(query, data: data(Self.nestedLists(2), "third"))
        #expect(try await answers.next()?.data == data(Self.nestedLists(2), "third"))
        try await server.shutdown()
    }

    /// A cache file at `path` holding `count` notes and a root listing them all, as JSON text rows (what the
    /// release before format 1 wrote), with migration step 3 not yet applied.
    static func jsonRowsFile(_ path: String, notes count: Int) throws {
        let old = try GQLDatabase(path: path)
        _ = try GQLCache(database: old)
        try old.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO _gqlcache_records (key, fields, updated_at)
            SELECT 'Note:' || i, json_object('__typename', 'Note', 'id', CAST(i AS TEXT), 'title', 'Note ' || i), 0
            FROM n
            """, [count])
        try old.execute(
            """
            INSERT INTO _gqlcache_records (key, fields, updated_at)
            SELECT 'QUERY_ROOT', json_object('notes', json_group_array(json_object('__ref', key))), 0
            FROM (SELECT key FROM _gqlcache_records WHERE key LIKE 'Note:%' ORDER BY CAST(substr(key, 6) AS INTEGER))
            """)
        try old.execute("DELETE FROM gql_migrations WHERE namespace = 'gqlcache' AND version = 3")
        try old.close()
    }

    @Test func theConversionGoesInBatchesAndConvertsEveryRow() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        try Self.jsonRowsFile(path, notes: 1_000)
        let db = try GQLDatabase(path: path)
        try db.execute("UPDATE _gqlcache_records SET fields = '{not json' WHERE key = 'Note:500'")
        let report = try db.write { tx in try RecordRowConversion.convert(tx, batchSize: 64) }
        // 1,000 notes and the root, but the row that does not parse; never more than a batch held at once.
        #expect(report.converted == 1_000)
        #expect(report.mostHeld == 64)
        let text = try db.fetchAll(sql: "SELECT key FROM _gqlcache_records WHERE typeof(fields) = 'text'")
        #expect(text == [["key": "Note:500"]])
        // Nothing left to convert: a second run converts nothing.
        #expect(try db.write { tx in try RecordRowConversion.convert(tx, batchSize: 64) } == .init())
        try db.close()
    }

    @Test func aCacheFileOfManyJSONRowsOpensWithEveryRowConverted() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        // More rows than one batch of the migration, and not a multiple of it.
        let count = RecordRowConversion.batchSize * 4 + 3
        try Self.jsonRowsFile(path, notes: count)
        let cache = try GQLCache(path: path)
        #expect(try GQLMigrator(namespace: "gqlcache").appliedVersion(cache.database) == 3)
        let kinds = try cache.database.fetchAll(
            sql: "SELECT typeof(fields) AS kind, count(*) AS n FROM _gqlcache_records GROUP BY kind")
        #expect(kinds == [["kind": "blob", "n": .int(Int64(count + 1))]])
        let notes = try cache.read("query { notes { id title } }")["notes"]?.arrayValue ?? []
        #expect(notes.count == count)
        #expect(notes.first == ["__typename": "Note", "id": "1", "title": "Note 1"])
        #expect(notes.last == ["__typename": "Note", "id": .string("\(count)"), "title": .string("Note \(count)")])
    }

    @Test func aCacheFileOfJSONRowsIsConvertedWhenItOpens() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = try StorageTests.writtenFile(in: directory)
        // Turn the file back into what the release before format 1 wrote: JSON text rows, migration step 2.
        let old = try GQLDatabase(path: path)
        let keys = try old.fetchAll(sql: "SELECT key FROM _gqlcache_records").compactMap { $0["key"]?.stringValue }
        let cache = try GQLCache(database: old)
        for key in keys {
            let text = try GQLValue.object(try #require(try cache.record(key))).jsonString()
            try old.execute("UPDATE _gqlcache_records SET fields = ? WHERE key = ?", [text, key])
        }
        try old.execute("UPDATE _gqlcache_records SET fields = '{not json' WHERE key = 'Post:2'")
        try old.execute("DELETE FROM gql_migrations WHERE namespace = 'gqlcache' AND version = 3")
        #expect(try old.fetchAll(sql: "SELECT key FROM _gqlcache_records WHERE typeof(fields) = 'blob'").isEmpty)
        try old.close()

        let reopened = try GQLCache(path: path)
        #expect(try GQLMigrator(namespace: "gqlcache").appliedVersion(reopened.database) == 3)
        let kinds = try reopened.database.fetchAll(
            sql: "SELECT key, typeof(fields) AS kind FROM _gqlcache_records ORDER BY key")
        #expect(
            kinds == [
                ["key": "Post:1", "kind": "blob"], ["key": "Post:2", "kind": "text"],
                ["key": "QUERY_ROOT", "kind": "blob"], ["key": "User:a", "kind": "blob"],
            ])
        // The converted rows read as before; the one that did not parse is still a miss, and the next write mends it.
        #expect(try reopened.record("Post:1")?["title"] == "One")
        #expect(try reopened.record("Post:2") == nil)
        #expect(throws: GQLError.self) { try reopened.read(StorageTests.query) }
        try reopened.write(StorageTests.query, data: StorageTests.data)
        #expect(try reopened.read(StorageTests.query) == StorageTests.data)
        #expect(try GQLCache(path: path).read(StorageTests.query) == StorageTests.data)
    }
}
