import Foundation
import GQLCache
import GQLDevServer
import GQLTestSupport
import Testing

/// The server's caching headers (`Cache-Control: max-age` less `Age` or the `Date`'s apparent age, `no-cache`,
/// `no-store`), from a stand-in server on 127.0.0.1 that sends them; time from an injected clock.
@Suite struct CacheControlTests {
    static let query = "query { note(id: 1) { id title } }"

    /// A stand-in whose answer `index` (from 0) carries `headers(index)`, its title naming the answer; a client
    /// for it and a memory cache on an injected clock. From answer `downFrom` on, it closes each connection
    /// without a word: the network fails, as with a server that went down.
    struct Stand {
        let clock = TestClock()
        let server: HostileServer
        let client: GQLServer
        let cache: GQLCache

        init(
            maxAge: [String: Duration] = [:], downFrom: Int = .max, _ headers: @escaping @Sendable (Int) -> [String]
        ) throws {
            server = try HostileServer { index, _ in
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
