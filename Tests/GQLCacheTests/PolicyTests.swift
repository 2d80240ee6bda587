import Foundation
import GQLCache
import Testing

/// Every policy against a running dev server, and again with the server stopped.
@Suite struct PolicyTests {
    @Test func cacheFirstAnswersFromTheNetworkThenFromTheCache() async throws {
        let fixture = try await CacheFixture.make()
        let first = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheFirst)
        #expect(first.source == .network)
        #expect(first.data?["getNote"]?["title"] == "Note 1")
        #expect(first.data?["getNote"]?["__typename"] == "Note")
        try await fixture.retitle("1", "Changed")
        let second = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheFirst)
        #expect(second.source == .cache)
        #expect(second.data == first.data)
        #expect(second.isStale == false)
        await fixture.stopServer()
        let offline = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheFirst)
        #expect(offline.source == .cache && offline.data == first.data)
        await fixture.finish()
    }

    @Test func cacheFirstGoesToTheNetworkWhenAFieldMisses() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"])
        // Same record, a field the cache has not seen.
        let body = try await fixture.cache.fetch(fixture.client, "GetNoteBody", ["id": "1"], policy: .cacheFirst)
        #expect(body.source == .network)
        // Both answers are now in the one record.
        let record = try #require(try fixture.cache.record("Note:1"))
        #expect(record["title"] == "Note 1" && record["body"] == .null)
        await fixture.finish()
    }

    @Test func cacheOnlyMissNamesTheMissingField() async throws {
        let fixture = try await CacheFixture.make()
        let error = await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheOnly)
        }
        #expect(error?.code == .cacheMiss)
        #expect(error?.message.contains("`getNote`") == true, "\(error?.message ?? "")")
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .networkOnly)
        let missing = await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "GetNoteBody", ["id": "1"], policy: .cacheOnly)
        }
        #expect(missing?.code == .cacheMiss)
        #expect(missing?.message.contains("`getNote.body`") == true, "\(missing?.message ?? "")")
        #expect(missing?.message.contains("Note:1") == true)
        await fixture.stopServer()
        let hit = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheOnly)
        #expect(hit.source == .cache && hit.data?["getNote"]?["n"] == 1)
        await fixture.finish()
    }

    @Test func networkOnlyAlwaysAsksTheServerAndStoresItsAnswer() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "2"], policy: .networkOnly)
        try await fixture.retitle("2", "Renamed")
        let fresh = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "2"], policy: .networkOnly)
        #expect(fresh.source == .network && fresh.data?["getNote"]?["title"] == "Renamed")
        #expect(try fixture.cache.read("GetNote", ["id": "2"])["getNote"]?["title"] == "Renamed")
        await fixture.stopServer()
        await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "2"], policy: .networkOnly)
        }
        await fixture.finish()
    }

    @Test func networkFirstFallsBackToTheCacheWhenTheServerIsDown() async throws {
        let fixture = try await CacheFixture.make()
        let online = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "3"], policy: .networkFirst)
        #expect(online.source == .network)
        try await fixture.retitle("3", "Later")
        let again = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "3"], policy: .networkFirst)
        #expect(again.source == .network && again.data?["getNote"]?["title"] == "Later")
        await fixture.stopServer()
        let offline = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "3"], policy: .networkFirst)
        #expect(offline.source == .cache && offline.data?["getNote"]?["title"] == "Later")
        // Nothing cached for note 1: the network's error, not a miss.
        let error = await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .networkFirst)
        }
        #expect(error?.code != .cacheMiss)
        await fixture.finish()
    }

    @Test func cacheAndNetworkReturnsTheCacheAndRefreshesIt() async throws {
        let fixture = try await CacheFixture.make()
        // A miss waits for the network.
        let first = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheAndNetwork)
        #expect(first.source == .network)
        let watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "1"], policy: .cacheOnly)
        var iterator = watch.makeAsyncIterator()
        #expect(try await iterator.next()?.data?["getNote"]?["title"] == "Note 1")
        try await fixture.retitle("1", "Refreshed")
        let cached = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheAndNetwork)
        #expect(cached.source == .cache && cached.data?["getNote"]?["title"] == "Note 1")
        // The background refresh reaches the cache, and the watcher hears of it.
        let refreshed = try await iterator.next()
        #expect(refreshed?.data?["getNote"]?["title"] == "Refreshed")
        // With the server stopped: the cached answer, and the failed refresh is nobody's error; with nothing
        // cached, the network's error (not a miss).
        await fixture.stopServer()
        let offline = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"], policy: .cacheAndNetwork)
        #expect(offline.source == .cache && offline.data?["getNote"]?["title"] == "Refreshed")
        let error = await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "2"], policy: .cacheAndNetwork)
        }
        #expect(error?.code != .cacheMiss)
        await fixture.finish()
    }

    @Test func storeFalseLeavesTheCacheAlone() async throws {
        let fixture = try await CacheFixture.make()
        for policy in [GQLCache.Policy.networkOnly, .networkFirst, .cacheFirst, .cacheAndNetwork] {
            let result = try await fixture.cache.fetch(
                fixture.client, "GetNote", ["id": "1"], policy: policy, store: false)
            #expect(result.source == .network)
        }
        // A mutation's answer and a watch's are not stored either.
        let mutated = try await fixture.cache.mutate(
            fixture.client, "UpdateNote", ["input": ["id": "2", "title": "Unstored"]], store: false)
        #expect(mutated.source == .network && mutated.data?["updateNote"]?["title"] == "Unstored")
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "2"], store: false).makeAsyncIterator()
        let watched = try #require(try await watch.next())
        #expect(watched.source == .network && watched.data?["getNote"]?["title"] == "Unstored")
        #expect(try fixture.cache.recordKeys().isEmpty)
        await fixture.finish()
    }

    @Test func mutationAnswersUpdateTheRecordsQueriesRead() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "ListNotes")
        let updated = try await fixture.cache.mutate(
            fixture.client, "UpdateNote", ["input": ["id": "2", "title": "Edited"]])
        #expect(updated.source == .network && updated.errors.isEmpty)
        await fixture.stopServer()
        let list = try fixture.cache.read("ListNotes")
        let titles = list["listNotes"]?["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue }
        #expect(titles?.sorted() == ["Edited", "Note 1", "Note 3"])
        await #expect(throws: GQLError.self) {
            try await fixture.cache.mutate(fixture.client, "GetNote", ["id": "1"])
        }
        await fixture.finish()
    }

    @Test func operationsGivenAsTextWork() async throws {
        let fixture = try await CacheFixture.make()
        let text = "query($id: ID!) { getNote(id: $id) { id tags meta } }"
        let result = try await fixture.cache.fetch(fixture.client, text, ["id": "1"])
        #expect(result.source == .network)
        #expect(try await fixture.cache.fetch(fixture.client, text, ["id": "1"]).source == .cache)
        await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(fixture.client, "NoSuchOperation")
        }
        await fixture.finish()
    }

    @Test func aTypedFetchDecodesTheAnswerAtItsPathFromEitherSource() async throws {
        struct Note: Decodable, Equatable {
            var id: String
            var title: String
        }
        let fixture = try await CacheFixture.make()
        let fetched = try await fixture.cache.fetch(Note.self, fixture.client, "GetNote", ["id": "1"], at: "getNote")
        #expect(fetched == Note(id: "1", title: "Note 1"))
        await fixture.stopServer()
        let cached = try await fixture.cache.fetch(
            Note.self, fixture.client, "GetNote", ["id": "1"], at: "getNote", policy: .cacheOnly)
        #expect(cached == fetched)
        let nowhere = await #expect(throws: GQLError.self) {
            try await fixture.cache.fetch(
                Note.self, fixture.client, "GetNote", ["id": "1"], at: "getNote.author", policy: .cacheOnly)
        }
        #expect(nowhere?.code == .notFound)
        await fixture.finish()
    }
}
