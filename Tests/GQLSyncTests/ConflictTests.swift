import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Two engines edit the same note on a dev server that checks `_version`: the second meets `ConflictUnhandled`.
@Suite(.timeLimit(.minutes(2))) struct ConflictTests {
    /// Engine `a` moves the server's note "c" to version 2 with title "A"; engine `b` (built with `resolution`,
    /// on its own app database holding the note at version 1) then sends title "B" at version 1.
    struct Scene {
        let fixture: SyncFixture
        let a: GQLSync
        let b: GQLSync
        let bStore: GQLDatabase
        let conflictID: Int64
        let events: Task<[GQLSync.Event], Never>
    }

    func scene(_ resolution: GQLSync.ConflictResolution) async throws -> Scene {
        let fixture = try await SyncFixture.make()
        let aStore = try GQLDatabase(path: fixture.directory.path("a.sqlite"))
        let bStore = try GQLDatabase(path: fixture.directory.path("b.sqlite"))
        let a = try GQLSync(fixture.client, database: aStore, configuration: fixture.configuration { $0.name = "a" })
        let b = try GQLSync(
            fixture.client, database: bStore,
            configuration: fixture.configuration {
                $0.name = "b"
                $0.conflictResolution = resolution
            })
        _ = try await a.force("CreateNote", ["id": "c", "title": "first", "n": 1])
        for store in [aStore, bStore] { try Note(id: "c", title: "first", n: 1).insert(store) }

        try await a.steady("UpdateNote", ["id": "c", "title": "A", "_version": 1], "c")
        try await a.drain()
        let events = onStatus(b) { statuses in
            var seen: [GQLSync.Event] = []
            for await status in statuses {
                if let event = status.event { seen.append(event) }
                if status.event == .drained, status.pendingCount == 0, seen.count > 1 { break }
            }
            return seen
        }
        try await bStore.write { tx in try tx.update("Note", ["id": "c", "title": "B"]) }
        let id = try await b.steady("UpdateNote", ["id": "c", "title": "B", "_version": 1], "c")
        try await b.drain()
        return Scene(fixture: fixture, a: a, b: b, bStore: bStore, conflictID: id, events: events)
    }

    @Test func serverWinsWritesTheServersItemLocallyAndDropsTheChange() async throws {
        let scene = try await scene(.serverWins)
        #expect(try scene.fixture.server.note("c")?["title"] == "A")
        #expect(try Note.fetchOne(scene.bStore, key: "c")?.title == "A")
        #expect(try scene.b.failedItems().isEmpty)
        #expect(scene.b.pendingCount == 0)
        #expect(await scene.events.value.contains(.conflict(id: scene.conflictID, resolution: "serverWins")))
        await scene.fixture.finish(scene.a, scene.b)
    }

    @Test func serverWinsIsHeardByObserversWithTheSyncOrigin() async throws {
        let fixture = try await SyncFixture.make()
        let store = try GQLDatabase(path: fixture.directory.path("b.sqlite"))
        let sync = try GQLSync(fixture.client, database: store, configuration: fixture.configuration())
        _ = try await sync.force("CreateNote", ["id": "o", "title": "one", "n": 1])
        _ = try await sync.force("UpdateNote", ["id": "o", "title": "two", "_version": 1])
        try Note(id: "o", title: "mine", n: 1).insert(store)
        let origins = GQLLocked<[String?]>([])
        _ = try Note.createObserver(store, .update) { (change: GQLChange) in
            origins.withLock { $0.append(change.origin) }
        }
        try await sync.steady("UpdateNote", ["id": "o", "title": "mine", "_version": 1], "o")
        try await sync.drain()
        await store.observersIdle()
        #expect(origins.withLock { $0 } == [GQLSync.origin])
        #expect(try Note.fetchOne(store, key: "o")?.title == "two")
        await fixture.finish(sync)
    }

    @Test func clientWinsResendsWithTheServersVersion() async throws {
        let scene = try await scene(.clientWins)
        let note = try #require(try scene.fixture.server.note("c"))
        #expect(note["title"] == "B")
        #expect(note["_version"] == 3)
        #expect(try Note.fetchOne(scene.bStore, key: "c")?.title == "B")
        #expect(try scene.b.failedItems().isEmpty)
        let events = await scene.events.value
        #expect(events.contains(.conflict(id: scene.conflictID, resolution: "clientWins")))
        #expect(events.contains(.sent(id: scene.conflictID, name: "UpdateNote")))
        await scene.fixture.finish(scene.a, scene.b)
    }

    @Test func aCustomStrategyCanMerge() async throws {
        let scene = try await scene(
            .custom { conflict in
                var merged = conflict.values
                merged["title"] = .string(
                    (conflict.server["title"]?.stringValue ?? "") + "+" + (conflict.values["title"]?.stringValue ?? ""))
                merged["_version"] = nil
                return .merged(merged)
            })
        #expect(try scene.fixture.server.note("c")?["title"] == "A+B")
        #expect(try scene.fixture.server.note("c")?["_version"] == 3)
        #expect(await scene.events.value.contains(.conflict(id: scene.conflictID, resolution: "merged")))
        await scene.fixture.finish(scene.a, scene.b)
    }

    @Test func aStrategyThatThrowsSetsTheItemAside() async throws {
        struct Undecided: Error {}
        let scene = try await scene(.custom { _ in throw Undecided() })
        #expect(try scene.fixture.server.note("c")?["title"] == "A")
        let failed = try scene.b.failedItems()
        #expect(failed.map(\.id) == [scene.conflictID])
        #expect(failed.first?.failure.message.contains("conflict strategy failed") == true)
        await scene.fixture.finish(scene.a, scene.b)
    }
}
