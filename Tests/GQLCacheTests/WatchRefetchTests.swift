import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// When a watch asks the server again and what it emits then. It does not ask again for an answer that does not
/// read back after its own refetch stored it: only a change of the app's (a write, an eviction, a clear) sends it
/// to the network. The stand-ins refuse answer 3 on, so a loop shows as a count, not as a hang (the time limits
/// only bound a test gone wrong).
@Suite(.timeLimit(.minutes(1))) struct WatchRefetchTests {
    /// A stand-in on 127.0.0.1 whose answer `index` is `body(index)`, refusing answer 3 on.
    static func stand(_ body: @escaping @Sendable (Int) -> String) throws -> (HostileServer, GQLServer) {
        let server = try HostileServer { index, _ in index < 3 ? .json(#"{"data": \#(body(index))}"#) : .raw([]) }
        return (server, GQLServer(HTTP: server.url))
    }

    /// A keyed object without its `id`, different on every request: stored under its path, it never reads back
    /// as the query asks (`b.id` misses). The watch emits the first answer and then the manual write's.
    @Test func anAnswerThatDoesNotReadBackIsNotAskedForAgain() async throws {
        let (server, client) = try Self.stand { #"{"b": {"__typename": "User", "v": \#($0)}}"# }
        defer { server.stop() }
        let cache = try memoryCache()
        let query = "query { b { id v } }"
        var watch = cache.watch(client, query, policy: .cacheFirst).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data?["b"]?["v"] == 0)
        try cache.write(query, data: ["b": ["__typename": "User", "id": "1", "v": 99]])
        let manual = try #require(try await watch.next())
        #expect(manual.source == .cache && manual.data?["b"]?["v"] == 99)
        #expect(server.requestCount == 1)
        try await client.shutdown()
    }

    /// An answer larger than the cache's byte budget: the trim after storing it evicts part of it, so it does not
    /// read back; the watch emits it once and waits for a change rather than asking again (and trimming again).
    @Test func anAnswerOverTheByteBudgetIsNotAskedForAgain() async throws {
        let (server, client) = try Self.stand { index in
            let notes = (1...30).map { #"{"__typename": "Note", "id": "\#($0)", "title": "answer \#(index)"}"# }
            return #"{"notes": [\#(notes.joined(separator: ", "))]}"#
        }
        defer { server.stop() }
        let cache = try memoryCache { $0.maximumBytes = 1_000 }
        let query = "query { notes { id title } }"
        var watch = cache.watch(client, query, policy: .cacheFirst).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data?["notes"]?[0]?["title"] == "answer 0")
        #expect(throws: GQLError.self) { try cache.read(query) }  // The budget took part of it.
        // A small answer written by hand fits the budget and reads back: it is the next element.
        try cache.write(query, data: ["notes": [["__typename": "Note", "id": "1", "title": "by hand"]]])
        let manual = try #require(try await watch.next())
        #expect(manual.source == .cache && manual.data?["notes"]?[0]?["title"] == "by hand")
        #expect(server.requestCount <= 2)
        try await client.shutdown()
    }

    /// A refresh that brings the same data as a stale answer clears the flag: a watch whose first answer is
    /// stale emits it flagged, then the server's equal answer unflagged.
    @Test func aRefreshWithTheSameDataClearsTheStaleFlag() async throws {
        let server = try HostileServer { index, _ in
            guard index < 3 else { return .raw([]) }
            return .http(
                200, #"{"data": {"note": {"__typename": "Note", "id": "1", "title": "same"}}}"#,
                headers: ["Cache-Control: max-age=60"])
        }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let clock = TestClock()
        let cache = try memoryCache { $0.clock = clock.clock }
        let query = "query { note(id: 1) { id title } }"
        _ = try await cache.fetch(client, query, policy: .networkOnly)
        clock.advance(seconds: 3_600)
        let emitted = GQLLocked<[GQLCache.Result]>([])
        let watch = cache.watch(client, query, policy: .cacheFirst)
        let consumer = Task { for try await result in watch { emitted.withLock { $0.append(result) } } }
        defer { consumer.cancel() }
        #expect(await pollUntil { emitted.withLock(\.count) == 2 })
        let results = emitted.withLock { $0 }
        #expect(results.map(\.isStale) == [true, false] && results.map(\.source) == [.cache, .network], "\(results)")
        #expect(results.allSatisfy { $0.data?["note"]?["title"] == "same" })
        #expect(server.requestCount == 2)
        try await client.shutdown()
    }

    /// A watch woken by an eviction refetches; `between` changes the cache after the answer is stored and before
    /// the watch reads it back (the module's test hooks), or with `afterReadBack` after it read the answer back and
    /// before it labels it. Returns what the watch emitted for the refetch, and with `next` what it emitted after.
    static func refetchedWith(
        _ cache: GQLCache, afterReadBack: Bool = false, next: Bool = false,
        _ between: @escaping @Sendable (GQLCache) throws -> Void
    ) async throws -> [GQLCache.Result] {
        let (server, client) = try Self.stand { index in
            #"{"note": {"__typename": "Note", "id": "1", "title": "answer \#(index)"}}"#
        }
        defer { server.stop() }
        let query = "query { note(id: 1) { id title } }"
        let done = GQLLocked(false)
        let hook: @Sendable () -> Void = {
            let isFirst = done.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            guard isFirst else { return }
            do { try between(cache) } catch { Issue.record(error) }
        }
        let start = { cache.watch(client, query, policy: .cacheFirst).makeAsyncIterator() }
        var watch =
            afterReadBack
            ? GQLCache.$afterReadingBackWatchedAnswer.withValue(hook, operation: start)
            : GQLCache.$afterStoringWatchedAnswer.withValue(hook, operation: start)
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data?["note"]?["title"] == "answer 0")
        try cache.evict(key: GQLCache.key("Note", "1"))
        var emitted = [try #require(try await watch.next())]
        #expect(done.withLock { $0 } && server.requestCount == 2)
        if next { emitted.append(try #require(try await watch.next())) }
        try await client.shutdown()
        return emitted
    }

    static let other = "query { other: note(id: 2) { id title } }"

    static func other(_ title: String) -> GQLValue {
        ["other": ["__typename": "Note", "id": "2", "title": .string(title)]]
    }

    /// A write of records the answer does not hold, between storing the server's answer and reading it back,
    /// leaves it the network's (review L1: any write anywhere made it `.cache`).
    @Test func anUnrelatedWriteAsTheAnswerIsStoredLeavesItTheNetworks() async throws {
        let cache = try memoryCache()
        // The root's field is in place: the next write changes Note:2 alone.
        try cache.write(Self.other, data: Self.other("a"))
        let refetched = try await Self.refetchedWith(cache) { try $0.write(Self.other, data: Self.other("b")) }[0]
        #expect(refetched.source == .network && refetched.data?["note"]?["title"] == "answer 1", "\(refetched)")
        #expect(try cache.read(Self.other) == Self.other("b"))
    }

    /// An optimistic layer over the answer's record, added between storing the server's answer and reading it
    /// back, is a change: the watch emits what it reads (the layer's title) as the cache's (review L1: a layer left the
    /// store's generation as it was, and the layer's data was labelled `.network`).
    @Test func aLayerOverTheAnswerAsItIsStoredMakesItTheCaches() async throws {
        let cache = try memoryCache()
        let refetched = try await Self.refetchedWith(cache) { cache in
            let mine: GQLValue = ["note": ["__typename": "Note", "id": "1", "title": "mine"]]
            _ = try cache.addOptimisticLayer("query { note(id: 1) { id title } }", data: mine)
        }[0]
        #expect(refetched.source == .cache && refetched.data?["note"]?["title"] == "mine", "\(refetched)")
    }

    /// A write of the answer's record after the watch read the answer back (before it labels it) is not in what it
    /// read: the server's answer is emitted as the network's, then the write as the cache's (review L7: a change
    /// noted after the read labelled the server's answer `.cache`).
    @Test func aWriteAfterTheReadBackLeavesTheAnswerTheNetworks() async throws {
        let cache = try memoryCache()
        let emitted = try await Self.refetchedWith(cache, afterReadBack: true, next: true) { cache in
            let mine: GQLValue = ["note": ["__typename": "Note", "id": "1", "title": "later"]]
            try cache.write("query { note(id: 1) { id title } }", data: mine)
        }
        #expect(emitted.map(\.source) == [.network, .cache], "\(emitted)")
        #expect(emitted.map { $0.data?["note"]?["title"] } == ["answer 1", "later"], "\(emitted)")
    }
}
