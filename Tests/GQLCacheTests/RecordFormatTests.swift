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
        let bytes = RecordCodec.encode(Self.record)
        let decoded = try #require(Self.decode(bytes))
        #expect(decoded == Self.record)
        #expect(decoded.keys == Self.record.keys)
        #expect(decoded["json"]?["__value"]?.objectValue?.keys == ["z", "a"])
        #expect(Self.decode(RecordCodec.encode([:])) == [:])
        // Smaller than the JSON text of the same record.
        #expect(bytes.count < (try GQLValue.object(Self.record).jsonString()).utf8.count)
    }

    @Test func damagedBytesAreRefusedNeverACrash() throws {
        let bytes = RecordCodec.encode(Self.record)
        // Every cut is refused.
        for length in 0..<bytes.count {
            #expect(Self.decode(Array(bytes[0..<length])) == nil, "cut at \(length)")
        }
        // Trailing bytes, another format, a count past the end.
        #expect(Self.decode(bytes + [0]) == nil)
        #expect(Self.decode([2] + bytes.dropFirst()) == nil)
        #expect(Self.decode([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) == nil)
        #expect(Self.decode([1, 1, 1, 0x61, 5] + Array(repeating: 0xFF, count: 9) + [0x01]) == nil)
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
