import Foundation
import GQLCache
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// GQLSync feeds a GQLCache (``GQLSync/Configuration/cache``): pulled pages and live events become records, and
/// the cache's watchers emit.
@Suite(.timeLimit(.minutes(2))) struct CacheFeedTests {
    static let noteQuery = "query($id: ID!) { getNote(id: $id) { id title } }"

    /// A cache in the app's database holding an old copy of note-1, and a cacheOnly watcher of it.
    static func watchedCache(_ db: GQLDatabase, _ client: GQLServer) throws
        -> (GQLCache, GQLCache.Watch.Iterator)
    {
        let cache = try GQLCache(database: db)
        try cache.write(
            noteQuery, ["id": "note-1"], data: ["getNote": ["__typename": "Note", "id": "note-1", "title": "old"]])
        return (cache, cache.watch(client, noteQuery, ["id": "note-1"], policy: .cacheOnly).makeAsyncIterator())
    }

    @Test func pulledPagesReachTheCachesWatchers() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let (cache, iterator) = try Self.watchedCache(db, fixture.client)
        var watch = iterator
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "old")
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        try await fixture.createNotes(1...2)
        _ = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "title 1")
        #expect(try cache.record("Note:note-2")?["title"] == "title 2")
        try await fixture.retitle("note-1", "renamed")
        try await fixture.deleteNote("note-2")
        let delta = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(delta.kind == .delta)
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "renamed")
        // The tombstone evicts its record.
        #expect(try cache.record("Note:note-2") == nil)
        await fixture.finish(sync)
    }

    @Test func liveEventsReachTheCachesWatchers() async throws {
        let fixture = try await SyncFixture.make()
        let client = LiveTests.socketClient(fixture)
        let db = try fixture.appDatabase()
        let (cache, iterator) = try Self.watchedCache(db, client)
        var watch = iterator
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "old")
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration { $0.cache = cache })
        try await fixture.createNotes(1...1)
        let live = try sync.live(SyncedNote.self, subscriptions: LiveTests.subscriptions, query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        _ = await LiveTests.next(&events, LiveTests.isPull)
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "title 1")
        // A subscription hears only writes made after the server registered it, which nothing announces:
        // retitle until an event reaches the cache (outcome, not time, decides; each round is 50 ms apart).
        let poker = Task {
            var round = 0
            while !Task.isCancelled {
                round += 1
                try await fixture.retitle("note-1", "live \(round)")
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let heard = try await watch.next()?.data?["getNote"]?["title"]?.stringValue
        poker.cancel()
        _ = try? await poker.value
        #expect(heard?.hasPrefix("live ") == true, "\(heard ?? "nothing")")
        #expect(await LiveTests.next(&events, LiveTests.isApplied) != nil)
        await live.stop()
        await fixture.finish(sync)
        try? await client.shutdown()
    }
}
