import Foundation
import GQLCache
import GQLDevServer
import GQLTestSupport
import Testing

/// The server's caching headers (`Cache-Control: max-age` less `Age` or the `Date`'s apparent age, `no-cache`,
/// `no-store`), from a stand-in server on 127.0.0.1 that sends them; time from an injected clock.
@Suite(.timeLimit(.minutes(1))) struct CacheControlTests {
    static let query = "query { note(id: 1) { id title } }"

    /// A stand-in whose answer `index` (from 0) carries `headers(index)`, its title naming the answer; a client
    /// for it and a memory cache on an injected clock. From answer `downFrom` on, it closes each connection
    /// without a word: the network fails, as with a server that went down. The answers numbered in `held` wait
    /// until ``release(_:)`` (at most 10 s, a bound for a test gone wrong), so a test decides their order.
    struct Stand {
        let clock = TestClock()
        let server: HostileServer
        let client: GQLServer
        let cache: GQLCache
        private let released = GQLLocked<Set<Int>>([])

        init(
            maxAge: [String: Duration] = [:], downFrom: Int = .max, held: Set<Int> = [],
            _ headers: @escaping @Sendable (Int) -> [String]
        ) throws {
            server = try HostileServer { [released] index, _ in
                // The server's own thread waits: the client's concurrency pool is not blocked.
                let deadline = ContinuousClock.now + .seconds(10)
                while held.contains(index), !released.withLock({ $0.contains(index) }), ContinuousClock.now < deadline {
                    usleep(1_000)
                }
                guard index < downFrom else { return .raw([]) }
                return .http(
                    200, #"{"data": {"note": {"__typename": "Note", "id": "1", "title": "answer \#(index)"}}}"#,
                    headers: headers(index))
            }
            client = GQLServer(HTTP: server.url)
            cache = try memoryCache { [clock] in
                $0.clock = clock.clock
                $0.maxAge = maxAge
            }
        }

        /// Lets held answer `index` go.
        func release(_ index: Int) { _ = released.withLock { $0.insert(index) } }

        /// Whether the cached answer is stale now.
        var isStale: Bool { get throws { try cache.readResult(CacheControlTests.query).isStale } }

        /// Fetches the query from the network (stored unless the answer says otherwise); returns its title.
        func fetch(_ policy: GQLCache.Policy = .networkOnly) async throws -> GQLCache.Result {
            try await cache.fetch(client, CacheControlTests.query, policy: policy)
        }

        func finish() async throws {
            try await client.shutdown()
            server.stop()
        }
    }

    /// A watch's answer after a change follows fetch's rule: an answer holding a `no-cache` field is asked of the
    /// server when a change other than a server's answer woke the watcher; a server's answer of the records
    /// (a fetch's) is the revalidation, emitted as it is stored; the watcher's own answer, `no-cache` again, is
    /// not asked for a second time.
    @Test func aWatchRevalidatesANoCacheAnswerAWriteBroughtIn() async throws {
        let stand = try Stand { index in index == 0 ? [] : ["Cache-Control: no-cache"] }
        defer { stand.server.stop() }
        var watch = stand.cache.watch(stand.client, Self.query, policy: .cacheFirst).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data?["note"]?["title"] == "answer 0")
        // Another fetch stores answer 1, no-cache: what the server just said, the watcher emits unasked.
        _ = try await stand.fetch()
        let fetched = try #require(try await watch.next())
        #expect(fetched.source == .cache && !fetched.isStale && fetched.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        // A manual write to the root record the answer reads (another note) leaves answer 1's no-cache title in
        // the answer: the watcher must not serve it from the cache unasked.
        try stand.cache.write(
            "query { note(id: 2) { id title } }", data: ["note": ["__typename": "Note", "id": "2", "title": "other"]])
        let revalidated = try #require(try await watch.next())
        #expect(revalidated.source == .network && revalidated.data?["note"]?["title"] == "answer 2")
        #expect(revalidated.isStale == false)
        // Answer 2 said no-cache too and woke the watcher as it was stored; what it reads back is what it emitted,
        // so the server is not asked again. The next answer is the next write's (a manual one: fresh).
        try stand.cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        let manual = try #require(try await watch.next())
        #expect(manual.source == .cache && !manual.isStale && manual.data?["note"]?["title"] == "by hand")
        #expect(stand.server.requestCount == 3)
        try await stand.finish()
    }

    /// Two watches of the same no-cache records whose answer differs on every request do not wake each other's
    /// refetches without end (3fa868d did: each refetch's answer woke the other watch, which asked again): a
    /// server's answer written since a watch's last read is its revalidation. A manual write makes both ask, and
    /// they share one request (held by the stand until both wait for it, so the order is the test's). Each watch
    /// ends on the server's newest answer; a manual write of the note then is the app's own data, emitted from the
    /// cache by both, unasked, whichever of its two wakes (answer 2's, the write's) a watch takes first: the
    /// server heard exactly three requests (it refuses answer 3 on, so a loop would show as a count, not as a
    /// hang). `max-age=0` (an answer stale at once, which a watch that finds it stale refreshes) takes the same
    /// course.
    @Test(arguments: ["Cache-Control: no-cache", "Cache-Control: max-age=0"])
    func twoWatchesOfANoCacheAnswerDoNotAskTheServerWithoutEnd(header: String) async throws {
        let stand = try Stand(downFrom: 3, held: [2]) { index in index == 0 ? [] : [header] }
        defer { stand.server.stop() }
        let (events, sink) = AsyncStream.makeStream(of: (watch: String, title: String?, source: GQLCache.Source).self)
        var watches: [Task<Void, any Error>] = []
        defer { for watch in watches { watch.cancel() } }
        var heard = events.makeAsyncIterator()
        func next() async throws -> (watch: String, title: String?, source: GQLCache.Source) {
            try #require(await heard.next())
        }
        // Answer 0 (no header): a asks for it, b (started once a has it) reads it from the cache.
        for name in ["a", "b"] {
            let watch = stand.cache.watch(stand.client, Self.query, policy: .cacheFirst)
            watches.append(
                Task {
                    for try await result in watch {
                        sink.yield((name, result.data?["note"]?["title"]?.stringValue, result.source))
                    }
                })
            let first = try await next()
            #expect(first.watch == name && first.title == "answer 0")
        }
        // A fetch's answer 1 (the header's): both emit it from the cache, neither asks.
        _ = try await stand.fetch()
        let fetched = [try await next(), try await next()]
        #expect(Set(fetched.map(\.watch)) == ["a", "b"])
        #expect(fetched.allSatisfy { $0.title == "answer 1" && $0.source == .cache })
        // A manual write to the root record the answer reads: both ask the server, in one request (2, held).
        try stand.cache.write(
            "query { note(id: 2) { id title } }", data: ["note": ["__typename": "Note", "id": "2", "title": "other"]])
        try #require(await pollUntil { stand.cache.sharedRequestWaiters == 2 && stand.server.requestCount == 3 })
        stand.release(2)
        let refetched = [try await next(), try await next()]
        #expect(Set(refetched.map(\.watch)) == ["a", "b"])
        #expect(refetched.allSatisfy { $0.title == "answer 2" && $0.source == .network }, "\(refetched)")
        // Settled: a fresh manual write reaches both from the cache, and the server heard nothing more.
        try stand.cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        let manual = [try await next(), try await next()]
        #expect(Set(manual.map(\.watch)) == ["a", "b"] && manual.allSatisfy { $0.title == "by hand" })
        // Exactly three: a watch judges a read by the changes before it (WatcherRegistry.wake), so the manual write
        // coming while it reads answer 2 is not taken for a change of the app's that answer holds (ae4fd2a's CI saw
        // a fourth request from that).
        #expect(stand.server.requestCount == 3, "\(stand.server.requestCount) requests")
        try await stand.finish()
    }

    /// A watch's re-read that finds its answer past its max age (a change of the app's woke it: a manual write of
    /// another note, which changes the root record the answer reads) emits it flagged and refreshes it. The
    /// refresh says `max-age=0`: stale as it is stored, yet the server's newest word, not asked for again; the
    /// app's next change while it is stale refreshes it once more, and only that.
    @Test func aWatchRefreshesAStaleAnswerAfterAChange() async throws {
        let stand = try Stand(downFrom: 4) { index in
            index == 0 ? ["Cache-Control: max-age=60"] : ["Cache-Control: max-age=0"]
        }
        defer { stand.server.stop() }
        var watch = stand.cache.watch(stand.client, Self.query, policy: .cacheFirst).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && !first.isStale && first.data?["note"]?["title"] == "answer 0")
        stand.clock.advance(seconds: 3_600)
        #expect(try stand.isStale)
        try stand.cache.write(
            "query { note(id: 2) { id title } }", data: ["note": ["__typename": "Note", "id": "2", "title": "two"]])
        let refreshed = try #require(try await watch.next())
        #expect(refreshed.source == .network && !refreshed.isStale && refreshed.data?["note"]?["title"] == "answer 1")
        #expect(try stand.isStale)
        try stand.cache.write(
            "query { note(id: 3) { id title } }", data: ["note": ["__typename": "Note", "id": "3", "title": "three"]])
        let again = try #require(try await watch.next())
        #expect(again.source == .network && again.data?["note"]?["title"] == "answer 2")
        // A write by hand of the note itself: fresh (no age configured), from the cache; the server heard 3.
        try stand.cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        let manual = try #require(try await watch.next())
        #expect(manual.source == .cache && !manual.isStale && manual.data?["note"]?["title"] == "by hand")
        #expect(stand.server.requestCount == 3)
        try await stand.finish()
    }

    /// cacheOnly asks no server: its watch emits the no-cache answer from the cache, flagged, as its fetch does.
    @Test func aCacheOnlyWatchEmitsANoCacheAnswerFlaggedStale() async throws {
        let stand = try Stand { index in index == 0 ? [] : ["Cache-Control: no-cache"] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        var watch = stand.cache.watch(stand.client, Self.query, policy: .cacheOnly).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .cache && !first.isStale && first.data?["note"]?["title"] == "answer 0")
        _ = try await stand.fetch()
        let second = try #require(try await watch.next())
        #expect(second.source == .cache && second.isStale && second.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    /// An optimistic layer over a no-cache answer is the app's value, not the server's answer it covers: the watch
    /// emits it from the cache without asking, online and with the server down (an outbox's layer, offline).
    @Test func anOptimisticLayerOverANoCacheAnswerIsEmittedUnasked() async throws {
        let stand = try Stand(downFrom: 2) { _ in ["Cache-Control: no-cache"] }
        defer { stand.server.stop() }
        let emitted = GQLLocked<[GQLCache.Result]>([])
        let watch = stand.cache.watch(stand.client, Self.query, policy: .cacheFirst)
        let consumer = Task { for try await result in watch { emitted.withLock { $0.append(result) } } }
        defer { consumer.cancel() }
        func title(_ index: Int) async -> GQLValue? {
            guard await pollUntil({ emitted.withLock(\.count) > index }) else { return nil }
            return emitted.withLock { $0[index] }.data?["note"]?["title"]
        }
        func layer(_ title: String) throws -> GQLCache.Layer {
            try stand.cache.addOptimisticLayer(
                Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": .string(title)]])
        }
        #expect(await title(0) == "answer 0")
        let online = try layer("opt")
        #expect(await title(1) == "opt")
        #expect(stand.server.requestCount == 1)
        // Without the layer the no-cache answer is asked of the server again (answer 1, the last it gives).
        stand.cache.removeOptimisticLayer(online)
        #expect(await title(2) == "answer 1")
        _ = try layer("opt offline")
        #expect(await title(3) == "opt offline")
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    @Test func maxAgeMakesTheAnswerStaleThenRefetchedWithoutAConfiguredAge() async throws {
        let stand = try Stand { index in index == 0 ? ["Cache-Control: public, max-age=60"] : [] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        stand.clock.advance(seconds: 59)
        let fresh = try await stand.fetch(.cacheFirst)
        #expect(fresh.source == .cache && !fresh.isStale && stand.server.requestCount == 1)
        stand.clock.advance(seconds: 2)
        #expect(try stand.isStale)
        // cacheFirst with no maxStale goes to the network for a stale answer; that answer has no header, so
        // the fields have no deadline any more and (no age configured) never go stale.
        let refetched = try await stand.fetch(.cacheFirst)
        #expect(refetched.source == .network && refetched.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        stand.clock.advance(seconds: 86_400)
        #expect(try stand.isStale == false)
        #expect(try stand.cache.record("Note:1")?["__expires"] == nil)
        try await stand.finish()
    }

    @Test func theServersMaxAgeWinsOverTheConfiguredAge() async throws {
        let stand = try Stand(maxAge: ["Note": .seconds(3_600)]) { _ in [#"Cache-Control: public, max-age="5""#] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        #expect(try stand.isStale == false)
        stand.clock.advance(seconds: 6)
        #expect(try stand.isStale)
        // A manual write (no header) gives the fields back to the configured hour.
        try stand.cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        stand.clock.advance(seconds: 600)
        #expect(try stand.isStale == false)
        try await stand.finish()
    }

    @Test func maxAgeIsReadAsRFC9111SaysOrIgnored() {
        #expect(CacheControl.maxAge("max-age=60") == 60)
        #expect(CacheControl.maxAge("private, MAX-AGE = 0") == 0)
        #expect(CacheControl.maxAge(#"max-age="30", must-revalidate"#) == 30)
        #expect(CacheControl.maxAge("s-maxage=10") == nil)
        #expect(CacheControl.maxAge("max-age=60, max-age=5") == 60)
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

    @Test func ageIsSubtractedFromMaxAgeAndNonsenseIsClamped() {
        func directives(_ fields: [(String, String)]) -> CacheControl.Directives {
            CacheControl.directives(of: fields.map { (name: $0.0, value: $0.1) }, now: 1_800_000_000)
        }
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", "50")]).freshFor == 10)
        #expect(directives([("cache-control", "max-age=60"), ("AGE", " 50 ")]).freshFor == 10)
        #expect(directives([("Cache-Control", "max-age=60")]).freshFor == 60)
        // Older than its lifetime: stale at once, never a negative lifetime.
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", "61")]).freshFor == 0)
        // The first Age line counts, and of a list its first member (RFC 9111 §5.1); great values count as 2^31;
        // invalid ones are ignored.
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", "5"), ("Age", "50")]).freshFor == 55)
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", "10, 20")]).freshFor == 50)
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", " 10 ,abc")]).freshFor == 50)
        let great = String(repeating: "9", count: 400)
        #expect(directives([("Cache-Control", "max-age=60"), ("Age", great)]).freshFor == 0)
        for nonsense in ["-5", "1.5", "ten", "abc", "", ", 5", "\"5\""] {
            #expect(directives([("Cache-Control", "max-age=60"), ("Age", nonsense)]).freshFor == 60, "\(nonsense)")
            #expect(CacheControl.age(nonsense) == nil, "\(nonsense)")
        }
        // Age alone says nothing about freshness.
        #expect(directives([("Age", "50")]) == CacheControl.Directives())
        #expect(CacheControl.age("2147483649") == 2_147_483_648)
        // no-store in any line and case; private and no-cache are stored.
        #expect(directives([("Cache-Control", "private"), ("Cache-Control", "NO-STORE")]).noStore)
        #expect(directives([("Cache-Control", "max-age=5, no-store")]) == .init(freshFor: 5, noStore: true))
        #expect(directives([("Cache-Control", "private, no-cache, max-age=5")]).noStore == false)
        #expect(directives([("Cache-Control", "no-storey")]).noStore == false)
        // Each line is read on its own: a quote one leaves open does not swallow the next line's directives.
        #expect(directives([("Cache-Control", #"ext="x"#), ("Cache-Control", "no-store")]).noStore)
        #expect(directives([("Cache-Control", #"a="b"#), ("Cache-Control", "max-age=5, no-cache")]).noCache)
        #expect(directives([("Cache-Control", #"a="b"#), ("Cache-Control", "max-age=5")]).freshFor == 5)
    }

    /// The clock's time in the stand-ins, and an HTTP date `seconds` before it.
    static let now = 1_800_000_000
    static func date(_ seconds: Int) -> String { HTTPDate.format(now - seconds) }

    @Test func theDatesApparentAgeCountsWhenLargerThanAge() {
        func freshFor(_ fields: [(String, String)]) -> Double? {
            CacheControl.directives(
                of: [(name: "Cache-Control", value: "max-age=60")] + fields.map { (name: $0.0, value: $0.1) },
                now: Double(Self.now)
            ).freshFor
        }
        // No Age: the apparent age, now less the Date (RFC 9111 §4.2.3).
        #expect(freshFor([("Date", Self.date(50))]) == 10)
        #expect(freshFor([("date", " " + Self.date(50) + " ")]) == 10)
        // Both: the larger.
        #expect(freshFor([("Date", Self.date(50)), ("Age", "20")]) == 10)
        #expect(freshFor([("Date", Self.date(20)), ("Age", "55")]) == 5)
        // A Date ahead of the clock is an apparent age of 0, never a longer life.
        #expect(freshFor([("Date", Self.date(-3_600))]) == 60)
        #expect(freshFor([("Date", Self.date(-3_600)), ("Age", "30")]) == 30)
        // Older than 2^31 s (1950): clamped like Age, and stale at once.
        #expect(CacheControl.apparentAge("Sun, 01 Jan 1950 00:00:00 GMT", now: Double(Self.now)) == 2_147_483_648)
        #expect(freshFor([("Date", "Sun, 01 Jan 1950 00:00:00 GMT")]) == 0)
        // The first Date line counts.
        #expect(freshFor([("Date", Self.date(30)), ("Date", Self.date(59))]) == 30)
        // A nonsense Date is ignored (unlike a nonsense Age): the max-age stands, or the Age alone.
        for nonsense in [
            "yesterday", "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT",
            "1800000000",
        ] {
            #expect(freshFor([("Date", nonsense)]) == 60, "\(nonsense)")
            #expect(freshFor([("Date", nonsense), ("Age", "15")]) == 45, "\(nonsense)")
        }
        // A Date alone, without a max-age, says nothing about freshness.
        #expect(
            CacheControl.directives(of: [(name: "Date", value: Self.date(50))], now: Double(Self.now))
                == CacheControl.Directives())
    }

    @Test func noCacheIsReadWithoutFieldNamesOnly() {
        func directives(_ value: String) -> CacheControl.Directives {
            CacheControl.directives(of: [(name: "Cache-Control", value: value)], now: 0)
        }
        #expect(directives("no-cache").noCache)
        #expect(directives("private, NO-CACHE, max-age=60") == .init(freshFor: 60, noCache: true))
        // Field names: only those header fields need revalidating, and this cache keeps no header fields.
        #expect(directives(#"no-cache="Set-Cookie, X-Token", max-age=60"#) == .init(freshFor: 60))
        #expect(directives(#"private="no-cache, no-store""#) == .init())
        #expect(directives("no-cacher").noCache == false)
        #expect(directives("no-cache").deadline(now: 100) == CacheControl.mustRevalidate)
        #expect(directives("max-age=60").deadline(now: 100) == 160)
        #expect(directives("public").deadline(now: 100) == nil)
    }

    @Test func aNoCacheAnswerIsStoredButRevalidatedBeforeEveryUse() async throws {
        // The first answer says no-cache (with a long max-age, which it overrides), the later ones say nothing.
        let stand = try Stand(maxAge: ["Note": .seconds(3_600)]) { index in
            index == 0 ? ["Cache-Control: no-cache, max-age=600"] : []
        }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        // Stored, and stale at once.
        #expect(try stand.cache.read(Self.query)["note"]?["title"] == "answer 0")
        #expect(try stand.isStale)
        // cacheOnly returns it, marked stale.
        let cached = try await stand.fetch(.cacheOnly)
        #expect(cached.source == .cache && cached.isStale && cached.data?["note"]?["title"] == "answer 0")
        // cacheFirst goes to the server, however much staleness maxStale allows.
        let revalidated = try await stand.cache.fetch(
            stand.client, Self.query, policy: .cacheFirst, maxStale: .seconds(86_400))
        #expect(revalidated.source == .network && revalidated.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        // That answer had no header: the configured hour applies again, and cacheFirst reads the cache.
        stand.clock.advance(seconds: 60)
        let fresh = try await stand.fetch(.cacheFirst)
        #expect(fresh.source == .cache && !fresh.isStale && fresh.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    /// RFC 9111 §4.2.4: a `no-cache` answer is never served without the server's word, not even when the server
    /// cannot be reached; only `cacheOnly` (which asks no server) returns it, flagged.
    @Test func aNoCacheAnswerIsNotServedWhenTheServerIsDown() async throws {
        let stand = try Stand(downFrom: 1) { _ in ["Cache-Control: no-cache"] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        for policy in [GQLCache.Policy.cacheFirst, .networkFirst, .cacheAndNetwork] {
            await #expect(throws: GQLError.self, "\(policy)") { try await stand.fetch(policy) }
        }
        await #expect(throws: GQLError.self) {
            try await stand.cache.fetch(stand.client, Self.query, policy: .cacheFirst, maxStale: .seconds(86_400))
        }
        var watch = stand.cache.watch(stand.client, Self.query, policy: .cacheFirst).makeAsyncIterator()
        await #expect(throws: GQLError.self) { try await watch.next() }
        let cached = try await stand.fetch(.cacheOnly)
        #expect(cached.source == .cache && cached.isStale && cached.data?["note"]?["title"] == "answer 0")
        try await stand.finish()
    }

    /// 50 s old by its `Age` (the first member of a list), or by its `Date` (the apparent age, RFC 9111 §4.2.3).
    @Test(arguments: ["Age: 50", "Age: 50, 7", "Date: " + CacheControlTests.date(50)])
    func anAnswerFromACDNIsFreshOnlyForWhatItsAgeLeaves(_ age: String) async throws {
        let stand = try Stand { _ in ["Cache-Control: public, max-age=60", age] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        stand.clock.advance(seconds: 9)
        let fresh = try await stand.fetch(.cacheFirst)
        #expect(fresh.source == .cache && !fresh.isStale && stand.server.requestCount == 1)
        stand.clock.advance(seconds: 1)
        #expect(try stand.isStale)
        try await stand.finish()
    }

    @Test func cacheFirstWithoutMaxStaleAsksTheServerAgainForAMaxAgeZeroAnswer() async throws {
        let stand = try Stand { _ in ["Cache-Control: max-age=0"] }
        defer { stand.server.stop() }
        let first = try await stand.fetch(.cacheFirst)
        #expect(first.source == .network && stand.server.requestCount == 1)
        // The clock has not moved: the answer is stale by 0 s, and a maxStale of zero serves no stale answer.
        #expect(try stand.isStale)
        let second = try await stand.fetch(.cacheFirst)
        #expect(second.source == .network && second.data?["note"]?["title"] == "answer 1")
        #expect(stand.server.requestCount == 2)
        try await stand.finish()
    }

    @Test func aNoStoreAnswerIsReturnedButNotWritten() async throws {
        let stand = try Stand { index in index == 0 ? [] : ["Cache-Control: private, no-store, max-age=60"] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        let watch = stand.cache.watch(stand.client, Self.query, policy: .cacheOnly)
        var answers = watch.makeAsyncIterator()
        #expect(try await answers.next()?.data?["note"]?["title"] == "answer 0")
        let unstored = try await stand.fetch()
        #expect(unstored.source == .network && unstored.data?["note"]?["title"] == "answer 1")
        #expect(try stand.cache.read(Self.query)["note"]?["title"] == "answer 0")
        #expect(try stand.cache.record("Note:1")?["__expires"] == nil)
        // The watcher heard nothing from it: its next answer is the next write's.
        try stand.cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "by hand"]])
        #expect(try await answers.next()?.data?["note"]?["title"] == "by hand")
        // On a miss too: returned, and the cache still misses.
        try stand.cache.clear()
        let missed = try await stand.fetch(.cacheFirst)
        #expect(missed.source == .network && missed.data?["note"]?["title"] == "answer 2")
        #expect(throws: GQLError.self) { try stand.cache.read(Self.query) }
        try await stand.finish()
    }

    @Test func aMaxAgeOf400DigitsIsStoredAsTwoToThe31Seconds() async throws {
        let digits = String(repeating: "9", count: 400)
        let stand = try Stand { _ in ["Cache-Control: max-age=\(digits)"] }
        defer { stand.server.stop() }
        let answer = try await stand.fetch()
        #expect(answer.data?["note"]?["title"] == "answer 0")
        stand.clock.advance(seconds: 2_147_483_647)
        #expect(try stand.isStale == false)
        stand.clock.advance(seconds: 2)
        #expect(try stand.isStale)
        try await stand.finish()
    }

    @Test func maxAgeIsReadFromEveryCacheControlLine() async throws {
        let stand = try Stand { _ in ["Cache-Control: private", "Cache-Control: max-age=30"] }
        defer { stand.server.stop() }
        _ = try await stand.fetch()
        #expect(try stand.cache.record("Note:1")?["__expires"] != nil)
        stand.clock.advance(seconds: 29)
        #expect(try stand.isStale == false)
        stand.clock.advance(seconds: 2)
        #expect(try stand.isStale)
        try await stand.finish()
    }

    @Test func anInvalidMaxAgeIsStaleAtOnce() async throws {
        let stand = try Stand(maxAge: ["Note": .seconds(3_600)]) { _ in ["Cache-Control: max-age=-1"] }
        defer { stand.server.stop() }
        let answer = try await stand.fetch()
        #expect(answer.data?["note"]?["title"] == "answer 0")
        #expect(try stand.isStale)
        try await stand.finish()
    }
}
