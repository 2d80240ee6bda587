import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// `GQLCache(path:key:)`: the cache's own file is encrypted (no cached value in its bytes, a plain cache as the
/// control), reopens with its key, refuses a wrong key and a missing one, and the cache works through it.
@Suite struct EncryptedCacheTests {
    static let key = GQLDatabase.Key.raw(Data((0..<32).map { UInt8($0 &* 5 &+ 9) }))
    static let query = "query { feed { id title author { id name } } }"

    static func data(_ title: String) -> GQLValue {
        [
            "feed": [
                [
                    "__typename": "Post", "id": "1", "title": .string(title),
                    "author": ["__typename": "User", "id": "a", "name": "Ada-SECRET-author-77"],
                ]
            ]
        ]
    }

    /// The bytes of the database file and its WAL and journal, whichever exist.
    static func bytes(_ path: String) -> Data {
        ["", "-wal", "-journal"].reduce(into: Data()) { all, suffix in
            all += (try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data()
        }
    }

    @Test func anEncryptedCacheFileHoldsNoCachedValueAndWorksThroughIt() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache-enc")
        defer { directory.cleanup() }
        let title = "SECRET-title-4b1e9"
        let secrets = [title, "Ada-SECRET-author-77"]

        // The control: a plain cache file holds the values, so the search below can find them.
        let plainPath = directory.path("plain.sqlite")
        let plain = try GQLCache(path: plainPath)
        try plain.write(Self.query, data: Self.data(title))
        try plain.database.close()
        for secret in secrets { #expect(Self.bytes(plainPath).range(of: Data(secret.utf8)) != nil, "\(secret)") }

        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path, key: Self.key)
        #expect(cache.database.isEncrypted)
        try cache.write(Self.query, data: Self.data(title))
        #expect(try cache.read(Self.query) == Self.data(title))
        // A change to one record is seen by the query that reads it.
        try cache.write(Self.query, data: Self.data(title + "-2"))
        #expect(try cache.read(Self.query) == Self.data(title + "-2"))
        // Open (WAL in use) and closed: no value in any byte of the files.
        for secret in secrets { #expect(Self.bytes(path).range(of: Data(secret.utf8)) == nil, "\(secret)") }
        try cache.database.close()
        for secret in secrets { #expect(Self.bytes(path).range(of: Data(secret.utf8)) == nil, "\(secret)") }
        let closed = Self.bytes(path)

        // A wrong key and no key are refused, the file untouched; the key reopens it with the answers.
        let wrong = #expect(throws: GQLError.self) {
            try GQLCache(path: path, key: .raw(Data(repeating: 1, count: 32)))
        }
        #expect(wrong?.code == .wrongKey)
        let keyless = #expect(throws: GQLError.self) { try GQLCache(path: path) }
        #expect(keyless?.code == .keyRequired)
        #expect(Self.bytes(path) == closed)
        let reopened = try GQLCache(path: path, key: Self.key)
        #expect(try reopened.read(Self.query) == Self.data(title + "-2"))
        #expect(try reopened.recordKeys() == ["Post:1", "QUERY_ROOT", "User:a"])
        try reopened.database.close()
    }
}
