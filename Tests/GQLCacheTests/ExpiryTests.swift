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

    @Test func aFieldIsStaleFromTheMomentItsAgeReachesItsMaxAge() throws {
        let clock = TestClock()
        let cache = try memoryCache {
            $0.clock = clock.clock
            $0.maxAge = ["Note": .seconds(60), "Note.n": .zero]
        }
        try cache.write("GetNote", ["id": "1"], data: Self.note)
        let request = "query($id: ID!) { getNote(id: $id) { id title } }"
        // A max age of zero is stale at once; 60 s is fresh at 59.5 s and stale at exactly 60 s (RFC 9111 §4.2).
        #expect(try cache.readResult("GetNote", ["id": "1"]).isStale)
        clock.advance(seconds: 59.5)
        #expect(try cache.readResult(request, ["id": "1"]).isStale == false)
        clock.advance(seconds: 0.5)
        #expect(try cache.readResult(request, ["id": "1"]).isStale)
    }
}
