import Foundation
import GQLCache
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// A person of the Strawberry cache peer's `syncPeople` delta query and `renamed` subscription.
struct StrawberryPerson: GQLObject, Equatable {
    var id = ""
    var name = ""
    var age = 0
    var _version = 0
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Person" }
}

/// GQLSync and a GQLCache against an independent server, Strawberry GraphQL at its defaults
/// (Tests/Interop/strawberry_cache_peer.py): pulls and live events reach the cache's watchers, and an outbox
/// item's optimistic answer shows across a restart, is replaced on delivery, and is rolled back when the server
/// refuses the item — as CacheFeedTests and OutboxLayerTests check against `gql-cli serve`'s dev server.
@Suite(.timeLimit(.minutes(2))) struct StrawberryCacheSyncTests {
    static let person = "query($id: ID!) { person(id: $id) { id name } }"

    static func queries() throws -> GQLQuery {
        let queries = GQLQuery()
        try queries.load(
            """
            query SyncPeople($limit: Int, $nextToken: String, $lastSync: Float) {
              syncPeople(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
                items { id name age _version _deleted } nextToken startedAt
              }
            }
            subscription Renamed { renamed { id name age _version _deleted } }
            mutation Rename($id: ID!, $name: String!) { rename(id: $id, name: $name) { id name } }
            """, sourceName: "strawberry-cache")
        return queries
    }

    /// A peer, an app database in a temporary directory, and a client of the peer over HTTP and its WebSocket.
    struct World {
        let peer: PythonPeer
        let directory: TemporaryDirectory
        let client: GQLServer
        let db: GQLDatabase

        static func start() async throws -> World {
            let peer = try await PythonPeer.start("strawberry_cache_peer.py")
            let directory = try TemporaryDirectory()
            var configuration = GQLServer.Configuration()
            configuration.timeout = .seconds(10)
            let client = GQLServer(
                HTTP: peer.ready, WebSocket: peer.ready.replacingOccurrences(of: "http://", with: "ws://"),
                configuration: configuration)
            return World(
                peer: peer, directory: directory, client: client,
                db: try GQLDatabase(path: directory.path("app.sqlite")))
        }

        func configuration(_ cache: GQLCache) throws -> GQLSync.Configuration {
            var configuration = GQLSync.Configuration()
            configuration.queries = try StrawberryCacheSyncTests.queries()
            configuration.name = "strawberry-cache"  // one engine, whichever server it has
            configuration.backoff = GQLBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
            configuration.cache = cache
            return configuration
        }

        /// A cache in the app database holding an old copy of person 1, and a cacheOnly watcher of it.
        func watchedCache() throws -> (GQLCache, GQLCache.Watch.Iterator) {
            let cache = try GQLCache(database: db)
            try cache.write(
                StrawberryCacheSyncTests.person, ["id": "1"],
                data: ["person": ["__typename": "Person", "id": "1", "name": "old"]])
            let watch = cache.watch(client, StrawberryCacheSyncTests.person, ["id": "1"], policy: .cacheOnly)
            return (cache, watch.makeAsyncIterator())
        }

        func rename(_ id: String, _ name: String) async throws {
            let result = try await client.mutation(
                "mutation($id: ID!, $name: String!) { rename(id: $id, name: $name) { id } }", ["id": id, "name": name])
            #expect(result.errors.isEmpty, "\(result.errors)")
        }

        func finish(_ engines: GQLSync...) async {
            for engine in engines { try? await engine.shutdown() }
            await peer.stop()
            try? await client.shutdown()
            try? await db.close()
            directory.cleanup()
        }
    }

    static func name(_ watch: inout GQLCache.Watch.Iterator) async throws -> GQLValue? {
        try await watch.next()?.data?["person"]?["name"]
    }

    @Test func pulledPagesReachTheCachesWatchers() async throws {
        let world = try await World.start()
        let (cache, iterator) = try world.watchedCache()
        var watch = iterator
        #expect(try await Self.name(&watch) == "old")
        var configuration = try world.configuration(cache)
        configuration.pullPageSize = 4
        configuration.delivers = false
        let sync = try GQLSync(world.client, database: world.db, configuration: configuration)
        let base = try await sync.pull(StrawberryPerson.self, query: "SyncPeople")
        #expect(base.kind == .base && base.pages == 2 && base.written == 6)
        #expect(try await Self.name(&watch) == "Ada")
        #expect(try cache.record(GQLCache.key("Person", "x:y"))?["name"] == "Colon")
        try await world.rename("1", "renamed")
        let delta = try await sync.pull(StrawberryPerson.self, query: "SyncPeople")
        #expect(delta.kind == .delta)
        #expect(try await Self.name(&watch) == "renamed")
        await world.finish(sync)
    }

    @Test func liveEventsReachTheCachesWatchers() async throws {
        let world = try await World.start()
        let (cache, iterator) = try world.watchedCache()
        var watch = iterator
        #expect(try await Self.name(&watch) == "old")
        var configuration = try world.configuration(cache)
        configuration.delivers = false
        let sync = try GQLSync(world.client, database: world.db, configuration: configuration)
        let live = try sync.live(StrawberryPerson.self, subscriptions: ["Renamed"], query: "SyncPeople")
        var events = live.events.makeAsyncIterator()
        _ = await LiveTests.next(&events, LiveTests.isPull)
        #expect(try await Self.name(&watch) == "Ada")
        // Once the peer counts the subscription (the outcome decides; the suite's time limit bounds the wait), a
        // rename is an event.
        while try await world.client.query("query { listeners }").data?["listeners"] != 1 {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await world.rename("1", "live")
        #expect(await LiveTests.next(&events, LiveTests.isApplied) != nil)
        #expect(try await Self.name(&watch) == "live")
        #expect(try StrawberryPerson.fetchOne(world.db, key: "1")?.name == "live")
        await live.stop()
        await world.finish(sync)
    }

    @Test func anOutboxAnswerShowsAcrossARestartAndIsReplacedOrRolledBack() async throws {
        let world = try await World.start()
        let (cache, _) = try world.watchedCache()
        func title(_ cache: GQLCache) throws -> GQLValue? {
            try cache.read(Self.person, ["id": "1"])["person"]?["name"]
        }
        func optimistic(_ name: String) -> GQLValue {
            ["rename": ["__typename": "Person", "id": "1", "name": .string(name)]]
        }
        // Queued while the app cannot reach the server.
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        var queueing = try world.configuration(cache)
        queueing.delivers = false
        let first = try GQLSync(offline, database: world.db, configuration: queueing)
        try first.steady("Rename", ["id": "1", "name": "Ada K."], "1", optimistic: optimistic("saving"))
        #expect(try title(cache) == "saving")
        try await first.shutdown()
        try await offline.shutdown()

        // The app starts again with the server reachable, which holds the rename's answer until told.
        #expect(try await world.client.mutation("mutation { hold(on: true) }").data?["hold"] == true)
        let reopened = try GQLCache(database: world.db)
        #expect(try title(reopened) == "old")
        let second = try GQLSync(world.client, database: world.db, configuration: try world.configuration(reopened))
        #expect(try title(reopened) == "saving")
        var watch = reopened.watch(world.client, Self.person, ["id": "1"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await Self.name(&watch) == "saving")
        _ = try await world.client.mutation("mutation { hold(on: false) }")
        try await second.drain()
        let failures = try second.failedItems()
        #expect(failures.isEmpty, "\(failures)")
        #expect(try await Self.name(&watch) == "Ada K.")
        #expect(reopened.optimisticLayerCount == 0)
        #expect(try world.db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").isEmpty)

        // Strawberry refuses an empty name: the item is set aside and its answer rolled back.
        try second.steady("Rename", ["id": "1", "name": ""], "1", optimistic: optimistic("Nobody"))
        try await second.drain()
        #expect(try second.failedItems().count == 1)
        #expect(try title(reopened) == "Ada K.")
        #expect(reopened.optimisticLayerCount == 0)
        await world.finish(second)
    }
}
