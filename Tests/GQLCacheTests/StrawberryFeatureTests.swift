import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// What the cache does against an independent server, Strawberry GraphQL at its defaults
/// (Tests/Interop/strawberry_cache_peer.py), beside the same behaviours against `gql-cli serve`'s dev server in the
/// other suites: watchers fed by queries, mutations and subscriptions; optimistic answers; interfaces and unions
/// through the server's own introspection; expiry with an injected clock; gc and the byte budget.
@Suite(.timeLimit(.minutes(2))) struct StrawberryFeatureTests {
    typealias World = StrawberryCacheWorld

    static func person(_ id: String, _ name: String, age: Int64) -> GQLValue {
        ["person": ["__typename": "Person", "id": .string(id), "name": .string(name), "age": .int(age)]]
    }

    @Test func watchersHearQueriesMutationsSubscriptionsAndWritesOnly() async throws {
        let world = try await World.start()
        let cache = world.cache
        var watch = cache.watch(world.client, World.person, ["id": "1"]).makeAsyncIterator()
        let first = try #require(try await watch.next())
        #expect(first.source == .network && first.data == Self.person("1", "Ada", age: 36))
        // Another query's answer: renamed behind the cache's back, then listed.
        try await world.rename("1", "Ada L.")
        _ = try await cache.fetch(world.client, World.people, policy: .networkOnly)
        let listed = try #require(try await watch.next())
        #expect(listed.source == .cache && listed.data?["person"]?["name"] == "Ada L.")
        // A mutation's answer.
        _ = try await cache.mutate(world.client, World.rename, ["id": "1", "name": "Countess"])
        #expect(try await watch.next()?.data?["person"]?["name"] == "Countess")
        // A subscription's event: once the peer counts the subscription, a rename behind the cache's back.
        let events = Task {
            for try await event in cache.subscribe(world.client, World.renamed) {
                return event.data?["renamed"]?["name"]
            }
            return nil
        }
        try await world.waitForListeners(1)
        try await world.rename("1", "Evented")
        #expect(try await watch.next()?.data?["person"]?["name"] == "Evented")
        #expect(try await events.value == "Evented")
        // An unrelated change (another person) and an equal answer emit nothing: the stream is ordered, so the
        // next element being a manual write's shows the step before it emitted nothing. Each step has a write of
        // its own after it (wakes coalesce: without one between, one step's emission could hide in the next's).
        func written(_ name: String) async throws -> Bool {
            try cache.write(World.person, ["id": "1"], data: Self.person("1", name, age: 36))
            return try await watch.next()?.data == Self.person("1", name, age: 36)
        }
        _ = try await cache.mutate(world.client, World.rename, ["id": "2", "name": "Hopper"])
        #expect(try await written("Manual"))
        #expect(try await written("Evented"))  // Back to what the server holds.
        _ = try await cache.fetch(world.client, World.person, ["id": "1"], policy: .networkOnly)
        #expect(try await written("Manual again"))
        await world.finish()
    }

    @Test func optimisticAnswersAreReplacedOnSuccessAndRolledBackOnFailure() async throws {
        let world = try await World.start()
        let cache = world.cache
        var watch = cache.watch(world.client, World.person, ["id": "2"]).makeAsyncIterator()
        #expect(try await watch.next()?.data?["person"]?["name"] == "Grace")
        func name() async throws -> GQLValue? { try await watch.next()?.data?["person"]?["name"] }
        /// Renames person 2 to `name` with an optimistic answer, while the peer holds renames unanswered: what the
        /// watcher sees before the peer answers is decided by the test, not by timing.
        func rename(_ name: String, optimistic: String) async throws -> Task<GQLCache.Result, any Error> {
            #expect(try await world.client.mutation("mutation { hold(on: true) }").data?["hold"] == true)
            return Task {
                try await cache.mutate(
                    world.client, World.rename, ["id": "2", "name": name],
                    optimistic: ["rename": ["__typename": "Person", "id": "2", "name": .string(optimistic)]])
            }
        }
        func release() async throws { _ = try await world.client.mutation("mutation { hold(on: false) }") }

        let saving = try await rename("Grace H.", optimistic: "Grace H. (saving)")
        #expect(try await name() == "Grace H. (saving)")
        #expect(try cache.read(World.person, ["id": "2"])["person"]?["name"] == "Grace H. (saving)")
        #expect(cache.optimisticLayerCount == 1)
        try await release()
        let saved = try await saving.value
        #expect(saved.source == .network && saved.data?["rename"]?["name"] == "Grace H.")
        #expect(try await name() == "Grace H.")
        #expect(cache.optimisticLayerCount == 0)

        // Strawberry refuses an empty name with a GraphQL error: the layer comes off, the watcher sees the data as
        // it was.
        let refusing = try await rename("", optimistic: "Nobody")
        #expect(try await name() == "Nobody")
        try await release()
        let refused = try await refusing.value
        #expect(refused.errors.first?.message == "a name cannot be empty", "\(refused.errors)")
        #expect(try await name() == "Grace H.")
        #expect(cache.optimisticLayerCount == 0)

        // The server stopped: the mutation throws, the layer comes off.
        await world.stopServer()
        await #expect(throws: (any Error).self) {
            try await cache.mutate(
                world.client, World.rename, ["id": "2", "name": "Offline"],
                optimistic: ["rename": ["__typename": "Person", "id": "2", "name": "Offline"]])
        }
        #expect(try cache.read(World.person, ["id": "2"])["person"]?["name"] == "Grace H.")
        #expect(cache.optimisticLayerCount == 0)
        await world.finish()
    }

    static let things = """
        query {
          things { ... on Node { id } ... on Person { name } ... on Robot { model } }
          node(id: "r1") { ... on Node { id } ... on Thing { __typename } ... on Robot { model } }
        }
        """

    @Test func interfacesAndUnionsMatchThroughTheServersIntrospection() async throws {
        let world = try await World.start()
        let introspection = try await world.client.query(
            "query { __schema { types { kind name possibleTypes { name } } } }")
        let schema = try GQLValue.object(["data": try #require(introspection.data)]).jsonString()
        var configuration = GQLCache.Configuration()
        try configuration.readSchema(schema)
        #expect(configuration.possibleTypes["Node"] == ["Person", "Robot"])
        #expect(configuration.possibleTypes["Thing"] == ["Person", "Robot"])
        let typed = try GQLCache(path: world.directory.path("typed.sqlite"), configuration: configuration)
        let network = try await typed.fetch(world.client, Self.things, policy: .networkOnly)
        #expect(network.errors.isEmpty, "\(network.errors)")
        #expect(network.data?["things"]?[1] == ["__typename": "Robot", "id": "r1", "model": "R2"])
        #expect(try typed.record("Robot:r1")?["model"] == "R2" && typed.record("Person:1")?["name"] == "Ada")
        let cached = try await typed.fetch(world.client, Self.things, policy: .cacheOnly)
        #expect(cached.source == .cache && cached.data == network.data)

        // Without the schema `... on Node` matches no object (only exact type names do): neither stored nor read,
        // so the cache's answer lacks the ids the server's had.
        _ = try await world.cache.fetch(world.client, Self.things, policy: .networkOnly)
        let plain = try await world.cache.fetch(world.client, Self.things, policy: .cacheOnly)
        #expect(plain.data?["things"]?[0] == ["__typename": "Person", "name": "Ada"])
        #expect(plain.data?["node"] == ["__typename": "Robot", "model": "R2"])
        try await typed.database.close()
        await world.finish()
    }

    @Test func expiryWithAnInjectedClock() async throws {
        let clock = TestClock()
        let world = try await World.start {
            $0.clock = clock.clock
            $0.maxAge = ["Person": .seconds(60)]
        }
        let cache = world.cache
        _ = try await cache.fetch(world.client, World.person, ["id": "1"])
        var watch = cache.watch(world.client, World.person, ["id": "1"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.isStale == false)

        // cacheAndNetwork: the stale answer now, flagged, and the cache refreshed (the watcher hears it, fresh).
        try await world.rename("1", "First")
        clock.advance(seconds: 61)
        let stale = try await cache.fetch(world.client, World.person, ["id": "1"], policy: .cacheAndNetwork)
        #expect(stale.source == .cache && stale.isStale && stale.data?["person"]?["name"] == "Ada")
        let refreshed = try #require(try await watch.next())
        #expect(refreshed.data?["person"]?["name"] == "First" && !refreshed.isStale)

        // cacheFirst within maxStale: the same.
        try await world.rename("1", "Second")
        clock.advance(seconds: 61)
        let within = try await cache.fetch(world.client, World.person, ["id": "1"], maxStale: .seconds(60))
        #expect(within.source == .cache && within.isStale && within.data?["person"]?["name"] == "First")
        let again = try #require(try await watch.next())
        #expect(again.data?["person"]?["name"] == "Second" && !again.isStale)

        // cacheFirst past maxStale (zero by default): the network's answer; fresh from the cache after it.
        try await world.rename("1", "Third")
        clock.advance(seconds: 61)
        let refetched = try await cache.fetch(world.client, World.person, ["id": "1"])
        #expect(refetched.source == .network && refetched.data?["person"]?["name"] == "Third")
        let fresh = try await cache.fetch(world.client, World.person, ["id": "1"])
        #expect(fresh.source == .cache && !fresh.isStale)

        // Stale with the server stopped: every policy that reads the cache serves it, flagged.
        clock.advance(seconds: 61)
        await world.stopServer()
        for policy in [GQLCache.Policy.cacheFirst, .cacheOnly, .networkFirst, .cacheAndNetwork] {
            let offline = try await cache.fetch(world.client, World.person, ["id": "1"], policy: policy)
            #expect(offline.source == .cache && offline.isStale, "\(policy)")
            #expect(offline.data?["person"]?["name"] == "Third", "\(policy)")
        }
        await world.finish()
    }

    @Test func gcAndTheByteBudgetOnTheServersAnswers() async throws {
        let world = try await World.start()
        let cache = world.cache
        _ = try await cache.fetch(world.client, World.people)
        _ = try await cache.fetch(world.client, World.person, ["id": "1"])
        _ = try await cache.mutate(world.client, World.rename, ["id": "2", "name": "Hopper"])
        // What only the mutation's root holds goes; Person:2 stays, listed by `people`.
        #expect(try cache.gc() == GQLCache.GarbageCollection(removedRecords: 1, removedReferences: 0))
        #expect(try cache.statistics().types["Person"] == 6)
        // Evicted, Person:2 leaves a dangling reference in `people`: the list goes, and with it the people only
        // it reached; `person(id: "1")` still reaches Person:1.
        try cache.evict(key: "Person:2")
        #expect(try cache.gc() == GQLCache.GarbageCollection(removedRecords: 4, removedReferences: 1))
        #expect(try cache.recordKeys() == ["Person:1", "QUERY_ROOT"])
        await world.finish()
    }

    @Test func theByteBudgetTrimsTheLeastRecentlyUsedOfTheServersAnswers() async throws {
        let world = try await World.start()
        let ids = ["1", "2", #"say "hi""#, "a.b", "x:y", "ünï©ødé 🎉"]
        // The budget: one byte less than the six people's answers take.
        for id in ids { _ = try await world.cache.fetch(world.client, World.person, ["id": id]) }
        let budget = try world.cache.statistics().bytes - 1
        let clock = TestClock()
        var configuration = GQLCache.Configuration()
        configuration.clock = clock.clock
        configuration.maximumBytes = budget
        let cache = try GQLCache(path: world.directory.path("budget.sqlite"), configuration: configuration)
        for id in ids.dropLast() {
            _ = try await cache.fetch(world.client, World.person, ["id": id])
            clock.advance(seconds: 1)
        }
        #expect(try cache.recordKeys().count == ids.count)
        _ = try cache.read(World.person, ["id": "1"])  // Person:1 is now read more recently than Person:2
        clock.advance(seconds: 1)
        _ = try await cache.fetch(world.client, World.person, ["id": ids[5]])
        let keys = try cache.recordKeys()
        #expect(!keys.contains("Person:2") && keys.contains("Person:1"), "\(keys)")
        #expect(keys.contains(GQLCache.key("Person", ids[5])) && keys.contains("QUERY_ROOT"), "\(keys)")
        #expect(try cache.statistics().bytes <= budget / 10 * 9)
        try await cache.database.close()
        await world.finish()
    }
}
