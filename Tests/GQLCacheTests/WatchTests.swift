import Foundation
import GQLCache
import Testing

/// Watchers: fed by other queries, mutations and manual writes; quiet for unrelated changes and equal answers;
/// ended by cancellation.
@Suite struct WatchTests {
    @Test func anotherQuerysAnswerWakesTheWatcher() async throws {
        let fixture = try await CacheFixture.make()
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "1"]).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data?["getNote"]?["title"] == "Note 1")
        try await fixture.retitle("1", "From the list")
        // The list answer holds Note:1 with its new title.
        _ = try await fixture.cache.fetch(fixture.client, "ListNotes", policy: .networkOnly)
        let second = try #require(try await watch.next())
        #expect(second.source == .cache && second.data?["getNote"]?["title"] == "From the list")
        await fixture.finish()
    }

    @Test func aMutationsAnswerWakesTheWatcher() async throws {
        let fixture = try await CacheFixture.make()
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "2"]).makeAsyncIterator()
        _ = try await watch.next()
        _ = try await fixture.cache.mutate(fixture.client, "UpdateNote", ["input": ["id": "2", "title": "Mutated"]])
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Mutated")
        await fixture.finish()
    }

    @Test func unrelatedChangesAndEqualAnswersEmitNothing() async throws {
        let cache = try memoryCache()
        let query = "query($id: ID!) { note(id: $id) { id title } }"
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")  // never asked: cacheOnly
        func note(_ id: String, _ title: String) -> GQLValue {
            ["note": ["__typename": "Note", "id": .string(id), "title": .string(title)]]
        }
        try cache.write(query, ["id": "1"], data: note("1", "a"))
        try cache.write(query, ["id": "2"], data: note("2", "x"))
        var watch = cache.watch(server, query, ["id": "1"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.data == note("1", "a"))
        // Unrelated (another note), equal (the same title again), and a field the watcher does not read: the
        // stream is ordered, so the next element being "b" shows none of them emitted.
        try cache.write(query, ["id": "2"], data: note("2", "y"))
        try cache.write(query, ["id": "1"], data: note("1", "a"))
        try cache.write(
            "query { note(id: 1) { id body } }", data: ["note": ["__typename": "Note", "id": "1", "body": "b"]])
        try cache.write(query, ["id": "1"], data: note("1", "b"))
        #expect(try await watch.next()?.data == note("1", "b"))
        try cache.write(query, ["id": "1"], data: note("1", "c"))
        #expect(try await watch.next()?.data == note("1", "c"))
        try await server.shutdown()
    }

    /// A string resent in another Unicode encoding (`é` as U+00E9, then as `e` + U+0301: equal as Swift strings) is
    /// a change the watcher emits, as the store keeps it: not an equal answer (before, the watch never emitted it;
    /// the time limit only bounds that).
    @Test(.timeLimit(.minutes(1))) func aStringInAnotherUnicodeEncodingIsEmitted() async throws {
        let cache = try memoryCache()
        let query = "query { note(id: 1) { id title } }"
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")  // never asked: cacheOnly
        func note(_ title: String) -> GQLValue { ["note": ["__typename": "Note", "id": "1", "title": .string(title)]] }
        try cache.write(query, data: note("\u{E9}"))
        var watch = cache.watch(server, query, policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.data?["note"]?["title"]?.stringValue.map { Array($0.utf8) } == [0xC3, 0xA9])
        try cache.write(query, data: note("e\u{301}"))
        let resent = try await watch.next()?.data?["note"]?["title"]?.stringValue.map { Array($0.utf8) }
        #expect(resent == [0x65, 0xCC, 0x81])
        try await server.shutdown()
    }

    @Test func cacheAndNetworkEmitsTheCacheThenTheNetwork() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "3"])
        try await fixture.retitle("3", "Newer")
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "3"], policy: .cacheAndNetwork)
            .makeAsyncIterator()
        let cached = try #require(try await watch.next())
        #expect(cached.source == .cache && cached.data?["getNote"]?["title"] == "Note 3")
        let network = try #require(try await watch.next())
        #expect(network.source == .network && network.data?["getNote"]?["title"] == "Newer")
        // A manual write is heard too.
        try fixture.cache.write(
            "GetNote", ["id": "3"], data: ["getNote": ["__typename": "Note", "id": "3", "title": "Manual", "n": 3]])
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Manual")
        await fixture.finish()
    }

    @Test func aCacheAndNetworkWatchOutlivesAServerThatIsDown() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"])
        await fixture.stopServer()
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "1"], policy: .cacheAndNetwork)
            .makeAsyncIterator()
        let cached = try #require(try await watch.next())
        #expect(cached.source == .cache && cached.data?["getNote"]?["title"] == "Note 1")
        // The failed network answer ends nothing: a later write is still heard.
        try fixture.cache.write(
            "GetNote", ["id": "1"], data: ["getNote": ["__typename": "Note", "id": "1", "title": "Offline", "n": 1]])
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Offline")
        await fixture.finish()
    }

    @Test func anEvictedRecordIsFetchedAgain() async throws {
        let fixture = try await CacheFixture.make()
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "1"]).makeAsyncIterator()
        _ = try await watch.next()
        try await fixture.retitle("1", "After eviction")
        try fixture.cache.evict(key: "Note:1")
        let again = try #require(try await watch.next())
        #expect(again.source == .network && again.data?["getNote"]?["title"] == "After eviction")
        await fixture.finish()
    }

    @Test func cancellingTheTaskEndsTheWatcher() async throws {
        let cache = try memoryCache()
        let query = "query { note(id: 1) { id title } }"
        try cache.write(query, data: ["note": ["__typename": "Note", "id": "1", "title": "a"]])
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")
        let first = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            var count = 0
            for try await _ in cache.watch(server, query, policy: .cacheOnly) {
                count += 1
                first.continuation.yield()
            }
            return count
        }
        var started = first.stream.makeAsyncIterator()
        _ = await started.next()
        #expect(cache.watcherCount == 1)
        task.cancel()
        let count = try await task.value
        #expect(count == 1)
        #expect(cache.watcherCount == 0)
        try await server.shutdown()
    }

    @Test func aCacheOnlyWatcherOnAMissFailsNamingTheField() async throws {
        let cache = try memoryCache()
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")
        var watch = cache.watch(server, "query { note(id: 1) { id title } }", policy: .cacheOnly).makeAsyncIterator()
        let error = await #expect(throws: GQLError.self) { try await watch.next() }
        #expect(error?.code == .cacheMiss && error?.message.contains("`note`") == true)
        try await server.shutdown()
    }
}
