import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// Expiry by type and by field, `maxStale`, and what each policy does with a stale answer; time comes from an
/// injected clock, never from waiting.
@Suite struct ExpiryTests {
    static let note: GQLValue = ["getNote": ["__typename": "Note", "id": "1", "title": "Cached", "n": 1]]

    @Test func fieldsGoStaleByTypeAndByField() throws {
        let clock = TestClock()
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maxAge = ["Note": .seconds(600), "Note.n": .seconds(60)]
        }
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        let request = "query($id: ID!) { getNote(id: $id) { id title } }"
        #expect(try cache.readResult(request, ["id": "1"]).isStale == false)
        clock.advance(seconds: 61)
        // `n` (60 s) is stale; an answer that does not select it is not.
        #expect(try cache.readResult("GetNote", ["id": "1"]).isStale == true)
        #expect(try cache.readResult(request, ["id": "1"]).isStale == false)
        clock.advance(seconds: 600)
        #expect(try cache.readResult(request, ["id": "1"]).isStale == true)
        // Writing the fields again (same values) makes them fresh.
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        #expect(try cache.readResult("GetNote", ["id": "1"]).isStale == false)
    }

    @Test func withoutAMaxAgeNothingGoesStaleAndNoTimesAreKept() throws {
        let clock = TestClock()
        let cache = try memoryCache { $0.clock = clock.clock }
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        clock.advance(seconds: 10 * 365 * 86_400)
        #expect(try cache.readResult("GetNote", ["id": "1"]).isStale == false)
        #expect(try cache.record("Note:1")?["__received"] == nil)
    }

    @Test func rootFieldsAgeUnderQuery() throws {
        let clock = TestClock()
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maxAge = ["Query.getNote": .seconds(5)]
        }
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        clock.advance(seconds: 6)
        #expect(try cache.readResult("GetNote", ["id": "1"]).isStale == true)
    }

    @Test func cacheFirstRefetchesAStaleAnswerAndServesItOnlyWhenTheNetworkFails() async throws {
        let clock = TestClock()
        let fixture = try await CacheFixture.make {
            $0.clock = clock.clock
            $0.defaultMaxAge = .seconds(60)
        }
        let cache = fixture.cache
        _ = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        try await fixture.retitle("1", "Newer")
        let fresh = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        #expect(fresh.source == .cache && !fresh.isStale && fresh.data?["getNote"]?["title"] == "Note 1")
        clock.advance(seconds: 61)
        // Past its age (maxStale zero): a miss that goes to the network, whose answer is fresh.
        let refetched = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        #expect(refetched.source == .network && refetched.data?["getNote"]?["title"] == "Newer")
        let again = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        #expect(again.source == .cache && !again.isStale)
        clock.advance(seconds: 61)
        await fixture.stopServer()
        let offline = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        #expect(offline.source == .cache && offline.isStale && offline.data?["getNote"]?["title"] == "Newer")
        // The other policies that read the cache flag it too.
        for policy in [GQLCache.Policy.cacheOnly, .networkFirst, .cacheAndNetwork] {
            let result = try await cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: policy)
            #expect(result.source == .cache && result.isStale, "\(policy)")
        }
        await fixture.finish()
    }

    @Test func withinMaxStaleTheStaleAnswerComesFirstAndIsRefreshed() async throws {
        let clock = TestClock()
        let fixture = try await CacheFixture.make {
            $0.clock = clock.clock
            $0.maxAge = ["Note": .seconds(60)]
        }
        let cache = fixture.cache
        _ = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        let watch = cache.watch(fixture.client, "GetNote", ["id": "1"], policy: .cacheOnly)
        var iterator = watch.makeAsyncIterator()
        #expect(try await iterator.next()?.isStale == false)
        try await fixture.retitle("1", "Refreshed")
        clock.advance(seconds: 90)
        let stale = try await cache.fetch(fixture.client, "GetNote", ["id": "1"], maxStale: .seconds(60))
        #expect(stale.source == .cache && stale.isStale && stale.data?["getNote"]?["title"] == "Note 1")
        // The background refresh reaches the cache: the watcher sees the new title, fresh.
        let refreshed = try await iterator.next()
        #expect(refreshed?.data?["getNote"]?["title"] == "Refreshed" && refreshed?.isStale == false)
        await fixture.finish()
    }

    @Test func receiveTimesSurviveAReopen() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let clock = TestClock()
        var configuration = GQLCache.Configuration()
        configuration.queries = try cacheTestQueries()
        configuration.clock = clock.clock
        configuration.maxAge = ["Note": .seconds(60)]
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path, configuration: configuration)
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        try cache.database.close()
        clock.advance(seconds: 30)
        #expect(
            try GQLCache(path: path, configuration: configuration).readResult("GetNote", ["id": "1"]).isStale == false)
        clock.advance(seconds: 31)
        #expect(try GQLCache(path: path, configuration: configuration).readResult("GetNote", ["id": "1"]).isStale)
    }
}

/// The server's `Cache-Control: max-age`, from a stand-in server on 127.0.0.1 that sends it; time from an injected
/// clock.
@Suite struct CacheControlTests {
    static let query = "query { note(id: 1) { id title } }"

    /// A server whose answer `index` (from 0) carries `headers(index)`, its title naming the answer.
    static func server(_ headers: @escaping @Sendable (Int) -> [String]) throws -> HostileServer {
        try HostileServer { index, _ in
            .http(
                200, #"{"data": {"note": {"__typename": "Note", "id": "1", "title": "answer \#(index)"}}}"#,
                headers: headers(index))
        }
    }

    @Test func maxAgeMakesTheAnswerStaleThenRefetchedWithoutAConfiguredAge() async throws {
        let clock = TestClock()
        let server = try Self.server { index in index == 0 ? ["Cache-Control: public, max-age=60"] : [] }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache { $0.clock = clock.clock }
        _ = try await cache.fetch(client, Self.query, policy: .networkOnly)
        clock.advance(seconds: 59)
        let fresh = try await cache.fetch(client, Self.query)
        #expect(fresh.source == .cache && !fresh.isStale && server.requestCount == 1)
        clock.advance(seconds: 2)
        #expect(try cache.readResult(Self.query).isStale)
        // cacheFirst with no maxStale goes to the network for a stale answer; that answer has no header, so
        // the fields have no deadline any more and (no age configured) never go stale.
        let refetched = try await cache.fetch(client, Self.query)
        #expect(refetched.source == .network && refetched.data?["note"]?["title"] == "answer 1")
        #expect(server.requestCount == 2)
        clock.advance(seconds: 86_400)
        #expect(try cache.readResult(Self.query).isStale == false)
        #expect(try cache.record("Note:1")?["__expires"] == nil)
        try await client.shutdown()
    }

    @Test func theServersMaxAgeWinsOverTheConfiguredAge() async throws {
        let clock = TestClock()
        let server = try Self.server { _ in [#"Cache-Control: no-cache, max-age="5""#] }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maxAge = ["Note": .seconds(3_600)]
        }
        _ = try await cache.fetch(client, Self.query, policy: .networkOnly)
        #expect(try cache.readResult(Self.query).isStale == false)
        clock.advance(seconds: 6)
        #expect(try cache.readResult(Self.query).isStale)
        // A manual write (no header) gives the fields back to the configured hour.
        try cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        clock.advance(seconds: 600)
        #expect(try cache.readResult(Self.query).isStale == false)
        try await client.shutdown()
    }

    @Test func maxAgeIsReadAsRFC9111SaysOrIgnored() {
        #expect(CacheControl.maxAge("max-age=60") == 60)
        #expect(CacheControl.maxAge("private, MAX-AGE = 0") == 0)
        #expect(CacheControl.maxAge(#"max-age="30", must-revalidate"#) == 30)
        #expect(CacheControl.maxAge("s-maxage=10") == nil)
        #expect(CacheControl.maxAge("max-age=60, max-age=5") == 60)
        #expect(CacheControl.maxAge("s-maxage=10") == nil)
        #expect(CacheControl.maxAge("no-store") == nil)
        #expect(CacheControl.maxAge("=, ,") == nil)
        #expect(CacheControl.maxAge(nil) == nil)
        // Invalid values read as 0: stale at once (RFC 9111 §4.2.1).
        #expect(CacheControl.maxAge("max-age=-1") == 0)
        #expect(CacheControl.maxAge("max-age=1.5") == 0)
        #expect(CacheControl.maxAge("max-age=") == 0)
        #expect(CacheControl.maxAge("max-age") == 0)
        // Great values count as 2^31 (RFC 9111 §1.2.2), and 309 digits and more (+inf as a Double) too.
        #expect(CacheControl.maxAge("max-age=2147483649") == 2_147_483_648)
        #expect(CacheControl.maxAge("max-age=" + String(repeating: "9", count: 400)) == 2_147_483_648)
        #expect(CacheControl.maxAge("max-age=" + String(repeating: "0", count: 400) + "7") == 7)
    }

    @Test func aMaxAgeOf400DigitsIsStoredAsTwoToThe31Seconds() async throws {
        let clock = TestClock()
        let digits = String(repeating: "9", count: 400)
        let server = try Self.server { _ in ["Cache-Control: max-age=\(digits)"] }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache { $0.clock = clock.clock }
        let answer = try await cache.fetch(client, Self.query, policy: .networkOnly)
        #expect(answer.data?["note"]?["title"] == "answer 0")
        clock.advance(seconds: 2_147_483_647)
        #expect(try cache.readResult(Self.query).isStale == false)
        clock.advance(seconds: 2)
        #expect(try cache.readResult(Self.query).isStale)
        try await client.shutdown()
    }

    @Test func maxAgeIsReadFromEveryCacheControlLine() async throws {
        let clock = TestClock()
        let server = try Self.server { _ in ["Cache-Control: private", "Cache-Control: max-age=30"] }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache { $0.clock = clock.clock }
        _ = try await cache.fetch(client, Self.query, policy: .networkOnly)
        #expect(try cache.record("Note:1")?["__expires"] != nil)
        clock.advance(seconds: 29)
        #expect(try cache.readResult(Self.query).isStale == false)
        clock.advance(seconds: 2)
        #expect(try cache.readResult(Self.query).isStale)
        try await client.shutdown()
    }

    @Test func anInvalidMaxAgeIsStaleAtOnce() async throws {
        let clock = TestClock()
        let server = try Self.server { _ in ["Cache-Control: max-age=-1"] }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maxAge = ["Note": .seconds(3_600)]
        }
        let answer = try await cache.fetch(client, Self.query, policy: .networkOnly)
        #expect(answer.data?["note"]?["title"] == "answer 0")
        #expect(try cache.readResult(Self.query).isStale)
        try await client.shutdown()
    }
}
