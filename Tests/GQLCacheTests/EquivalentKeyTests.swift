import Foundation
import GQLTestSupport
import Testing

@testable import GQLCache

/// Ids and arguments that are canonically equivalent as Unicode but differ in their bytes (`é` as U+00E9 and as
/// `e` + U+0301; U+212B ANGSTROM SIGN and U+00C5) name two server objects and two fields: the cache keeps them
/// apart in memory, in SQLite, after a reopen, for watchers, gc and evict, as a server and SQLite's `BINARY`
/// keys do. (Swift's String equality is canonical equivalence: as String keys they were merged in memory.)
@Suite struct EquivalentKeyTests {
    static let precomposed = "\u{E9}"
    static let decomposed = "e\u{301}"
    static let note = "query($id: ID!) { note(id: $id) { id title } }"
    static let greeting = "query($name: String!) { greeting(name: $name) }"

    static func note(_ id: String, _ title: String) -> GQLValue {
        ["note": ["__typename": "Note", "id": .string(id), "title": .string(title)]]
    }

    /// The keys of `cache`'s rows as their bytes.
    static func rowKeys(_ cache: GQLCache) throws -> [[UInt8]] { try cache.recordKeys().map { Array($0.utf8) } }

    @Test func theTwoStringsAreOneAsStringsAndTwoAsKeys() {
        #expect(Self.precomposed == Self.decomposed)  // what made String keys merge them
        #expect(RecordKey("Note:" + Self.precomposed) != RecordKey("Note:" + Self.decomposed))
        #expect(RecordKey("Item:\u{212B}") != RecordKey("Item:\u{C5}"))
        let keys = ["Note:" + Self.precomposed, "Note:" + Self.decomposed, "Note:\u{E9}"].map { RecordKey($0) }
        #expect(Set(keys).count == 2)
        #expect(RecordKey("User:1") == RecordKey(String("User:") + "1"))
        // Past ASCII, equal bytes are equal keys; equivalent text of the same length (combining marks in another
        // order) and text equivalent to ASCII (KELVIN SIGN, GREEK QUESTION MARK) are other keys, both ways round.
        #expect(RecordKey("Note:" + Self.decomposed) == RecordKey("Note:e" + "\u{301}"))
        for (one, other) in [("a\u{327}\u{301}", "a\u{301}\u{327}"), ("Item:K", "Item:\u{212A}"), (";", "\u{37E}")] {
            #expect(one == other)
            #expect(RecordKey(one) != RecordKey(other) && RecordKey(other) != RecordKey(one))
            #expect(Set([RecordKey(one), RecordKey(other)]).count == 2)
        }
        #expect(CanonicalJSON.text(.string(Self.precomposed)) == #""\u00e9""#)
        #expect(CanonicalJSON.text(.string(Self.decomposed)) == #""e\u0301""#)
        #expect(CanonicalJSON.text(["b": "x\n\"\\", "a": "\u{1F600}"]) == #"{"a":"\ud83d\ude00","b":"x\n\"\\"}"#)
    }

    @Test func equivalentIdsAreTwoRecordsInMemoryInSQLiteAndAfterAReopen() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        try cache.write(Self.note, ["id": Self.precomposed], data: Self.note(Self.precomposed, "precomposed"))
        try cache.write(Self.note, ["id": Self.decomposed], data: Self.note(Self.decomposed, "decomposed"))
        let keys = [Array(("Note:" + Self.decomposed).utf8), Array(("Note:" + Self.precomposed).utf8)]
        for reader in [cache, try GQLCache(path: path)] {  // the memory layer, then SQLite only
            #expect(try reader.read(Self.note, ["id": Self.precomposed])["note"]?["title"] == "precomposed")
            #expect(try reader.read(Self.note, ["id": Self.decomposed])["note"]?["title"] == "decomposed")
            #expect(try reader.record("Note:" + Self.precomposed)?["title"] == "precomposed")
            #expect(try reader.record("Note:" + Self.decomposed)?["title"] == "decomposed")
            #expect(try Self.rowKeys(reader).filter { $0.first == UInt8(ascii: "N") } == keys)
            #expect(try reader.statistics().types["Note"] == 2)
        }
    }

    @Test func equivalentArgumentsAreTwoFields() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        try cache.write(Self.greeting, ["name": Self.precomposed], data: ["greeting": "hello precomposed"])
        try cache.write(Self.greeting, ["name": Self.decomposed], data: ["greeting": "hello decomposed"])
        for reader in [cache, try GQLCache(path: path)] {
            #expect(try reader.read(Self.greeting, ["name": Self.precomposed])["greeting"] == "hello precomposed")
            #expect(try reader.read(Self.greeting, ["name": Self.decomposed])["greeting"] == "hello decomposed")
            let root = try #require(try reader.record(CacheKey.queryRoot))
            let fieldKeys = [#"greeting({"name":"\u00e9"})"#, #"greeting({"name":"e\u0301"})"#]
            #expect(root.keys.filter { $0.hasPrefix("greeting(") }.sorted() == fieldKeys)
        }
        // An ASCII argument keeps the field key it always had.
        try cache.write(Self.greeting, ["name": "Ada"], data: ["greeting": "hello Ada"])
        #expect(try cache.record(CacheKey.queryRoot)?[#"greeting({"name":"Ada"})"#] == "hello Ada")
    }

    @Test func aChangeToOneWakesOnlyItsWatcher() async throws {
        let cache = try memoryCache()
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")  // never asked: cacheOnly
        try cache.write(Self.note, ["id": Self.precomposed], data: Self.note(Self.precomposed, "a"))
        try cache.write(Self.note, ["id": Self.decomposed], data: Self.note(Self.decomposed, "x"))
        var first = cache.watch(server, Self.note, ["id": Self.precomposed], policy: .cacheOnly).makeAsyncIterator()
        var second = cache.watch(server, Self.note, ["id": Self.decomposed], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await first.next()?.data?["note"]?["title"] == "a")
        #expect(try await second.next()?.data?["note"]?["title"] == "x")
        // The decomposed note changes, then the precomposed one: the first watcher's next answer is its own note's
        // change (merged, it would have read "y").
        try cache.write(Self.note, ["id": Self.decomposed], data: Self.note(Self.decomposed, "y"))
        #expect(try await second.next()?.data?["note"]?["title"] == "y")
        try cache.write(Self.note, ["id": Self.precomposed], data: Self.note(Self.precomposed, "b"))
        #expect(try await first.next()?.data?["note"]?["title"] == "b")
        try await server.shutdown()
    }

    @Test func theRegistryWakesOnlyTheWatcherOfTheBytesThatChanged() {
        let registry = WatcherRegistry()
        let (_, waker) = AsyncStream.makeStream(of: Void.self)
        let id = registry.add(waker)
        registry.setDependencies([RecordKey("Item:\u{212B}")], of: id, readSince: 0)
        registry.notify([RecordKey("Item:\u{C5}")])
        #expect(registry.wake(id, since: 0).changes == .none)
        registry.notify([RecordKey("Item:\u{212B}")])
        #expect(registry.wake(id, since: 1).changes == .other)
    }

    @Test func evictAndGCTellTheTwoApart() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        let angstrom = "\u{212B}"
        let ring = "\u{C5}"
        let items: [GQLValue] = [
            ["__typename": "Item", "id": .string(angstrom), "name": "sign"],
            ["__typename": "Item", "id": .string(ring), "name": "letter"],
        ]
        let written = try cache.write(objects: items, typename: "Item")
        #expect(written == 2)
        #expect(try cache.record("Item:" + angstrom)?["name"] == "sign")
        #expect(try cache.record("Item:" + ring)?["name"] == "letter")
        #expect(try cache.evict(key: "Item:" + angstrom))
        #expect(try cache.record("Item:" + angstrom) == nil)
        #expect(try cache.record("Item:" + ring)?["name"] == "letter")
        #expect(try GQLCache(path: path).record("Item:" + ring)?["name"] == "letter")
        // gc keeps what the root reaches: the decomposed note, not the precomposed one written apart.
        try cache.write(Self.note, ["id": Self.decomposed], data: Self.note(Self.decomposed, "kept"))
        _ = try cache.write(
            objects: [["__typename": "Note", "id": .string(Self.precomposed), "title": "unreached"]], typename: "Note")
        let report = try cache.gc()
        #expect(report.removedRecords == 2)  // Item:Å (U+00C5) and Note:é (U+00E9)
        #expect(try Self.rowKeys(cache) == [Array(("Note:" + Self.decomposed).utf8), Array("QUERY_ROOT".utf8)])
        #expect(try GQLCache(path: path).read(Self.note, ["id": Self.decomposed])["note"]?["title"] == "kept")
    }

    @Test func literalArgumentsInTwoEncodingsAreTwoOperations() throws {
        let cache = try memoryCache()
        let first = "query { greeting(name: \"\(Self.precomposed)\") }"
        let second = "query { greeting(name: \"\(Self.decomposed)\") }"
        try cache.write(first, data: ["greeting": "hello precomposed"])
        try cache.write(second, data: ["greeting": "hello decomposed"])
        #expect(try cache.read(first)["greeting"] == "hello precomposed")
        #expect(try cache.read(second)["greeting"] == "hello decomposed")
        // Each text is compiled (and would be sent) as itself.
        #expect(Array(try cache.operation(second).text.utf8).contains(0xCC))  // U+0301's first byte
        #expect(!Array(try cache.operation(first).text.utf8).contains(0xCC))
        let root = try #require(try cache.record(CacheKey.queryRoot))
        #expect(root.keys.filter { $0.hasPrefix("greeting(") }.count == 2)
    }

    @Test func sharedRequestsTellTextsAndVariablesApartByTheirBytes() throws {
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")
        func request(_ text: String, _ id: String) -> GQLCache.SharedRequest {
            GQLCache.SharedRequest(
                server: ObjectIdentifier(server), text: ExactText(text),
                variables: CanonicalJSON.text(["id": .string(id)]), store: true)
        }
        let byVariables = [request(Self.note, Self.precomposed), request(Self.note, Self.decomposed)]
        #expect(byVariables[0] != byVariables[1] && Set(byVariables).count == 2)
        let byText = [Self.precomposed, Self.decomposed].map { request("{ a(x: \"\($0)\") }", "") }
        #expect(byText[0] != byText[1] && Set(byText).count == 2)
        #expect(request(Self.note, Self.decomposed) == request(Self.note, "e" + "\u{301}"))
    }

    @Test func aReferenceMovesToTheTwinAndAStringToTheOtherEncoding() async throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        let current = "query { current { id title } }"
        func answer(_ id: String, _ title: String) -> GQLValue {
            ["current": ["__typename": "Note", "id": .string(id), "title": .string(title)]]
        }
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")  // never asked: cacheOnly
        try cache.write(current, data: answer(Self.precomposed, "precomposed"))
        var watch = cache.watch(server, current, policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.data?["current"]?["title"] == "precomposed")
        // The server now answers its other object: the root's reference moves, and the watcher hears of it.
        try cache.write(current, data: answer(Self.decomposed, "decomposed"))
        #expect(try await watch.next()?.data?["current"]?["title"] == "decomposed")
        let reference = try cache.record(CacheKey.queryRoot)?["current"]?["__ref"]?.stringValue
        #expect(reference.map { Array($0.utf8) } == Array(("Note:" + Self.decomposed).utf8))
        // A string resent in the other encoding is written as sent.
        try cache.write(current, data: answer(Self.decomposed, Self.precomposed))
        try cache.write(current, data: answer(Self.decomposed, Self.decomposed))
        for reader in [cache, try GQLCache(path: path)] {
            let read = try reader.read(current)["current"]
            #expect(read?["id"]?.stringValue.map { Array($0.utf8) } == Array(Self.decomposed.utf8))
            #expect(read?["title"]?.stringValue.map { Array($0.utf8) } == Array(Self.decomposed.utf8))
        }
        try await server.shutdown()
    }

    /// An id's `,`, `.` or `\` followed by a combining mark is one Character but still the ASCII byte: it is escaped,
    /// so two key-field tuples cannot spell one key.
    @Test func separatorsBeforeCombiningMarksAreEscaped() throws {
        #expect(CacheKey.escape(",\u{301}") == "\\,\u{301}")
        #expect(CacheKey.escape("a.\u{301}") == "a\\.\u{301}")
        #expect(CacheKey.kind(of: "Note:x\\.\u{301}") == "Note")
        #expect(CacheKey.kind(of: "QUERY_ROOT.\u{301}") == "(nested)")
        var configuration = GQLCache.Configuration()
        configuration.keyFields = ["T": ["a", "b"]]
        let cache = try GQLCache(inMemory: true, configuration: configuration)
        let objects: [GQLValue] = [
            ["__typename": "T", "a": "x,\u{301}y", "b": "\u{301}z", "n": "one"],
            ["__typename": "T", "a": "x", "b": "\u{301}y,\u{301}z", "n": "two"],
        ]
        #expect(try cache.write(objects: objects, typename: "T") == 2)
        #expect(try cache.statistics().types["T"] == 2)
    }
}
