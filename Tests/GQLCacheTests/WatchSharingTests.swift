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
        let running = Running()
        var tasks: [Task<Void, any Error>] { running.tasks }

        init(_ stand: CacheControlTests.Stand) async throws {
            self.stand = stand
            for index in 0..<5 {
                running.start(stand.cache.watch(stand.client, CacheControlTests.query, policy: .cacheFirst))
                let first = try #require(try await running.next(1).first)
                #expect(first.watch == index && first.title == "answer 0")
            }
        }

        /// The next `count` emissions, in the order they came.
        func next(_ count: Int) async throws -> [Heard] { try await running.next(count) }

        func cancelAll() { running.cancelAll() }
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

    /// Watches, each iterated by a task of its own that reports what it emits as `(index, title, source)` (the
    /// note's `title`, or its alias `heading`), the index counting from 0 in the order they started.
    final class Running: Sendable {
        private let events: AsyncStream<Heard>
        private let sink: AsyncStream<Heard>.Continuation
        private let started = GQLLocked<[Task<Void, any Error>]>([])
        var tasks: [Task<Void, any Error>] { started.withLock { $0 } }

        init(_ watches: [GQLCache.Watch] = []) {
            (events, sink) = AsyncStream.makeStream(of: Heard.self)
            for watch in watches { start(watch) }
        }

        func start(_ watch: GQLCache.Watch) {
            started.withLock { tasks in
                let (index, sink) = (tasks.count, sink)
                tasks.append(
                    Task {
                        for try await result in watch {
                            let note = result.data?["note"]
                            sink.yield((index, (note?["title"] ?? note?["heading"])?.stringValue, result.source))
                        }
                    })
            }
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

    /// The variable `name` of a GraphQL request's JSON body, as text (nil when the body has none).
    static func variable(_ name: String, in body: String) -> String? {
        let request = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]
        return ((request?["variables"] as? [String: Any])?[name]).map { "\($0)" }
    }

    /// Two watches of one operation with different variables ask at the same time and do not share: the server
    /// hears one request per variable set, and each watch gets the answer to its own. Each request waits at the
    /// server until both have arrived (at most 10 s, a bound for a test gone wrong), so both are in flight at
    /// once: a request wrongly shared would show as a count of one, not as a race the test may lose.
    @Test func watchesWithDifferentVariablesDoNotShareARequest() async throws {
        let arrived = GQLLocked(0)
        let server = try HostileServer { _, body in
            arrived.withLock { $0 += 1 }
            let deadline = ContinuousClock.now + .seconds(10)
            while arrived.withLock({ $0 }) < 2, ContinuousClock.now < deadline { usleep(1_000) }
            let id = Self.variable("id", in: body) ?? "none"
            return .json(#"{"data": {"note": {"__typename": "Note", "id": "\#(id)", "title": "note \#(id)"}}}"#)
        }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let query = "query($id: ID!) { note(id: $id) { id title } }"
        let running = Running(["1", "2"].map { cache.watch(client, query, ["id": $0], policy: .networkOnly) })
        defer { running.cancelAll() }
        let answers = try await running.next(2)
        #expect(Set(answers.map { "\($0.watch): \($0.title ?? "none")" }) == ["0: note 1", "1: note 2"], "\(answers)")
        #expect(answers.allSatisfy { $0.source == .network })
        #expect(server.requestCount == 2)
        #expect(Set(server.bodies.compactMap { Self.variable("id", in: $0) }) == ["1", "2"])
        try await client.shutdown()
    }

    /// A shared first request that fails (the server closes the connection without a word) fails every watch
    /// waiting for it, as the watch documents (the first answer's errors are thrown from the iteration), not
    /// only the one that started it; the server heard the one request.
    @Test func aFailedSharedFirstRequestFailsEveryWatch() async throws {
        let stand = try CacheControlTests.Stand(downFrom: 0, held: [0]) { _ in [] }
        defer { stand.server.stop() }
        let running = Running(
            (0..<3).map { _ in stand.cache.watch(stand.client, CacheControlTests.query, policy: .networkOnly) })
        defer { running.cancelAll() }
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 3 && stand.server.requestCount == 1 })
        stand.release(0)
        for (index, task) in running.tasks.enumerated() {
            guard case .failure(let error) = await task.result else {
                Issue.record("watch \(index) ended without the request's error")
                continue
            }
            #expect(!(error is CancellationError), "watch \(index): \(error)")
        }
        #expect(stand.server.requestCount == 1)
        #expect(stand.cache.sharedRequestWaiters == 0)
        try await stand.finish()
    }

    /// A shared refetch that fails (after an eviction, the server closes the connection) is not an error of any
    /// of the five watches waiting for it: as the watch documents, each waits for the next change, and a manual
    /// write reaches all five from the cache. Every one was released from the failed request (none waits for it)
    /// and none emitted anything from it; the server heard the one refetch.
    @Test func aFailedSharedRefetchLeavesEveryWatchWatching() async throws {
        let stand = try CacheControlTests.Stand(downFrom: 1, held: [1]) { _ in [] }
        defer { stand.server.stop() }
        let five = try await Five(stand)
        defer { five.cancelAll() }
        try stand.cache.evict(key: GQLCache.key("Note", "1"))
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 5 && stand.server.requestCount == 2 })
        stand.release(1)
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 0 })
        try stand.cache.write(
            CacheControlTests.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        let manual = try await five.next(5)
        #expect(Set(manual.map(\.watch)) == Set(0..<5), "\(manual)")
        #expect(manual.allSatisfy { $0.title == "by hand" && $0.source == .cache }, "\(manual)")
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    /// Cancelling every watch that shares a request cancels the request: the server, which never answers it,
    /// sees the client close the connection. The wait for that is bounded at 10 s (pollUntil's default), far
    /// above the milliseconds a cancellation takes, so only a request left running fails it on a loaded machine.
    @Test func cancellingEveryWatchOfASharedRequestCancelsIt() async throws {
        let server = try HostileServer { _, _ in .hang }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let running = Running(
            (0..<3).map { _ in cache.watch(client, CacheControlTests.query, policy: .networkOnly) })
        try #require(await pollUntil { cache.sharedRequestWaiters == 3 && server.requestCount == 1 })
        running.cancelAll()
        for task in running.tasks { _ = await task.result }
        #expect(await pollUntil { server.closedByClient == 1 })
        #expect(cache.sharedRequestWaiters == 0 && server.requestCount == 1)
        try await client.shutdown()
    }

    /// Two watches of the same no-cache record whose texts differ (one reads the title through an alias) cannot
    /// share a request: after a change of the app's each asks the server with its own text. Neither's answer,
    /// stored, makes the other ask again (a server's answer is the revalidation), so they settle after those two
    /// requests: a manual write then reaches both from the cache and the server heard four in all (it refuses
    /// from answer 6 on, so a loop would show as a count, not as a hang). This is review L1's variant: watches that
    /// cannot share a request (other text, other variables, another server or `store`) each ask once per change
    /// of the app's, and a server's answer never sets another off.
    @Test func watchesOfANoCacheRecordWithDifferentTextsDoNotShareAndSettle() async throws {
        let server = try HostileServer { index, body in
            guard index < 6 else { return .raw([]) }
            let field = body.contains("heading") ? "heading" : "title"
            return .http(
                200, #"{"data": {"note": {"__typename": "Note", "id": "1", "\#(field)": "answer \#(index)"}}}"#,
                headers: index == 0 ? [] : ["Cache-Control: no-cache"])
        }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let aliased = "query { note(id: 1) { id heading: title } }"
        // Answer 0 (no header): the plain watch asks for it; the aliased one, started after, reads it from the cache.
        let plain = Running([cache.watch(client, CacheControlTests.query, policy: .cacheFirst)])
        defer { plain.cancelAll() }
        #expect(try await plain.next(1).map(\.title) == ["answer 0"])
        let alias = Running([cache.watch(client, aliased, policy: .cacheFirst)])
        defer { alias.cancelAll() }
        #expect(try await alias.next(1).map { "\($0.title ?? "none") \($0.source)" } == ["answer 0 cache"])
        #expect(server.requestCount == 1)
        // A fetch's answer 1 (no-cache) reaches both from the cache, unasked.
        _ = try await cache.fetch(client, CacheControlTests.query, policy: .networkOnly)
        #expect(try await plain.next(1).map(\.title) == ["answer 1"])
        #expect(try await alias.next(1).map(\.title) == ["answer 1"])
        // A manual write to the root record both read: each asks with its own text (answers 2 and 3).
        try cache.write(
            "query { note(id: 2) { id title } }", data: ["note": ["__typename": "Note", "id": "2", "title": "other"]])
        // Both answered and stored (no watch waits for a request) before the next write.
        try #require(await pollUntil { server.requestCount >= 4 && cache.sharedRequestWaiters == 0 })
        #expect(Set(server.bodies.dropFirst(2).map { $0.contains("heading") }) == [false, true])
        // Settled: a manual write of the note reaches both from the cache, and the server heard nothing more. A
        // watch still reading its refetch's answer back when the write comes holds the app's data, and emits it from
        // the cache too (a071198 took this test out when such a read-back was labelled the network's).
        try cache.write(CacheControlTests.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        for running in [plain, alias] {
            var last: Heard?
            while last?.title != "by hand" { last = try await running.next(1).first }
            #expect(last?.source == .cache)
        }
        #expect(server.requestCount == 4)
        try await client.shutdown()
    }
}
