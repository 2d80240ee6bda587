import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// Watches of one query (same operation, same variables) that ask the server at the same time share one request
/// in flight, as Apollo's deduplication does, and one watch's cancellation does not take the answer from the
/// others. The stand on 127.0.0.1 holds the shared request until every watch waits for it, so the test decides by
/// the server's count, not by timing.
@Suite(.timeLimit(.minutes(1))) struct WatchSharingTests {
    typealias Heard = (watch: Int, title: String?, source: GQLCache.Source)

    /// Five cacheFirst watches of the stand's query: the first asks the server for answer 0, the others (each
    /// started once the one before has emitted) read it from the cache.
    struct Five {
        let stand: CacheControlTests.Stand
        let tasks: [Task<Void, any Error>]
        let events: AsyncStream<Heard>

        init(_ stand: CacheControlTests.Stand) async throws {
            self.stand = stand
            let (events, sink) = AsyncStream.makeStream(of: Heard.self)
            self.events = events
            var heard = events.makeAsyncIterator()
            var tasks: [Task<Void, any Error>] = []
            for index in 0..<5 {
                let watch = stand.cache.watch(stand.client, CacheControlTests.query, policy: .cacheFirst)
                tasks.append(
                    Task {
                        for try await result in watch {
                            sink.yield((index, result.data?["note"]?["title"]?.stringValue, result.source))
                        }
                    })
                let first = try #require(await heard.next())
                #expect(first.watch == index && first.title == "answer 0")
            }
            self.tasks = tasks
        }

        /// The next `count` emissions, in the order they came.
        func next(_ count: Int) async throws -> [Heard] {
            var heard = events.makeAsyncIterator()
            var results: [Heard] = []
            for _ in 0..<count { results.append(try #require(await heard.next())) }
            return results
        }

        func cancelAll() { for task in tasks { task.cancel() } }
    }

    /// One app change (an eviction of the record all five read) sends the five to the network: one request,
    /// and every watch emits its answer. A manual write after it reaches all five from the cache, unasked.
    @Test func fiveWatchesOfOneQueryShareOneRequestAfterAChange() async throws {
        let stand = try CacheControlTests.Stand(downFrom: 2, held: [1]) { _ in [] }
        defer { stand.server.stop() }
        let five = try await Five(stand)
        defer { five.cancelAll() }
        #expect(stand.server.requestCount == 1)
        try stand.cache.evict(key: GQLCache.key("Note", "1"))
        // Every watch waits for the one request, which reached the server.
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 5 && stand.server.requestCount == 2 })
        stand.release(1)
        let refetched = try await five.next(5)
        #expect(Set(refetched.map(\.watch)) == Set(0..<5), "\(refetched)")
        #expect(refetched.allSatisfy { $0.title == "answer 1" && $0.source == .network }, "\(refetched)")
        try stand.cache.write(
            CacheControlTests.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        let manual = try await five.next(5)
        #expect(Set(manual.map(\.watch)) == Set(0..<5) && manual.allSatisfy { $0.title == "by hand" })
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    /// One of the five watches is cancelled while the shared request is in flight: it stops waiting, and the
    /// other four still get the answer of that one request.
    @Test func cancellingOneWatchMidRequestLeavesTheOthersTheAnswer() async throws {
        let stand = try CacheControlTests.Stand(downFrom: 2, held: [1]) { _ in [] }
        defer { stand.server.stop() }
        let five = try await Five(stand)
        defer { five.cancelAll() }
        try stand.cache.evict(key: GQLCache.key("Note", "1"))
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 5 && stand.server.requestCount == 2 })
        five.tasks[2].cancel()
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 4 })
        stand.release(1)
        let refetched = try await five.next(4)
        #expect(Set(refetched.map(\.watch)) == [0, 1, 3, 4], "\(refetched)")
        #expect(refetched.allSatisfy { $0.title == "answer 1" && $0.source == .network }, "\(refetched)")
        // The cancelled watch ended without an answer; the server heard the one request.
        _ = await five.tasks[2].result
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    /// A watch woken by a change does not join a request sent before that change (review H2): watch 1's first
    /// request is in flight (held) when the app evicts the note (as after changing it on the server); watch 2,
    /// woken by the eviction, sends a request of its own rather than taking the older answer, and both end on
    /// the newer answer.
    @Test func aWatchWokenByAChangeDoesNotJoinARequestSentBeforeIt() async throws {
        let stand = try CacheControlTests.Stand(held: [1, 2]) { _ in [] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()  // Answer 0, stored.
        let (events, sink) = AsyncStream.makeStream(of: Heard.self)
        var heard = events.makeAsyncIterator()
        var tasks: [Task<Void, any Error>] = []
        defer { for task in tasks { task.cancel() } }
        for (index, policy) in [(2, GQLCache.Policy.cacheFirst), (1, .networkOnly)] {
            let watch = stand.cache.watch(stand.client, CacheControlTests.query, policy: policy)
            tasks.append(
                Task {
                    for try await result in watch {
                        sink.yield((index, result.data?["note"]?["title"]?.stringValue, result.source))
                    }
                })
        }
        let first = try #require(await heard.next())
        #expect(first.watch == 2 && first.title == "answer 0")
        // Watch 1's request (answer 1) is held at the server; then the change.
        try #require(await pollUntil { stand.server.requestCount == 2 && stand.cache.sharedRequestWaiters == 1 })
        try stand.cache.evict(key: GQLCache.key("Note", "1"))
        // Watch 2 asks anew (answer 2) instead of waiting for answer 1 (a second waiter of the old request).
        try #require(await pollUntil { stand.server.requestCount == 3 || stand.cache.sharedRequestWaiters == 2 })
        try #require(stand.server.requestCount == 3)
        stand.release(1)
        let older = try #require(await heard.next())
        #expect(older.watch == 1 && older.title == "answer 1", "\(older)")
        stand.release(2)
        var latest: [Int: String?] = [:]
        while latest[1] != "answer 2" || latest[2] != "answer 2" {
            let next = try #require(await heard.next())
            latest[next.watch] = next.title
        }
        #expect(stand.server.requestCount == 3)
        try await stand.finish()
    }
}
