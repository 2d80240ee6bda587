import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Delta pulls into the app's database, against a real dev server on SQLite files.
@Suite(.timeLimit(.minutes(2))) struct PullTests {
    @Test func aPullPagesThroughEveryItem() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(
            fixture.client, database: db, configuration: fixture.configuration { $0.pullPageSize = 7 })
        try await fixture.createNotes(1...25)
        let pages = GQLLocked<[Int]>([])
        let report = try await sync.pull(SyncedNote.self, query: "SyncNotes") { report in
            pages.withLock { $0.append(report.written) }
        }
        #expect(report.kind == .base)
        #expect(report.pages == 4)
        #expect(pages.withLock { $0 } == [7, 14, 21, 25])
        #expect(report.written == 25)
        #expect(report.cursor != nil)
        let notes = try SyncedNote.fetchAll(db, order: "n")
        #expect(notes.map(\.n) == Array(1...25))
        #expect(notes.first == SyncedNote(id: "note-1", title: "title 1", n: 1, _version: 1))
        await fixture.finish(sync)
    }

    @Test func tombstonesDeleteRowsAndTheCursorAsksOnlyForChanges() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...10)
        try await sync.pull(SyncedNote.self, query: "SyncNotes")

        try await fixture.deleteNote("note-3")
        try await fixture.deleteNote("note-7")
        try await fixture.retitle("note-5", "changed")
        let delta = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(delta.kind == .delta)
        #expect(delta.deleted == 2)
        #expect(delta.written == 1)
        #expect(try SyncedNote.fetchAll(db, order: "n").map(\.n) == [1, 2, 4, 5, 6, 8, 9, 10])
        #expect(try SyncedNote.fetchOne(db, key: "note-5")?.title == "changed")
        #expect(try SyncedNote.fetchOne(db, key: "note-5")?._version == 2)

        // Nothing changed: the next delta brings nothing, not the whole table again.
        let quiet = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(quiet.kind == .delta)
        #expect(quiet.written == 0 && quiet.deleted == 0)
        await fixture.finish(sync)
    }

    @Test func theCursorOutlivesTheEngine() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let first = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...5)
        #expect(try await first.pull(SyncedNote.self, query: "SyncNotes").written == 5)
        try await first.shutdown()

        try await fixture.retitle("note-2", "later")
        let second = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        let report = try await second.pull(SyncedNote.self, query: "SyncNotes")
        #expect(report.kind == .delta)
        #expect(report.written == 1)
        #expect(try SyncedNote.fetchOne(db, key: "note-2")?.title == "later")

        // Forgetting the cursor makes the next pull a base pull.
        try second.resetCursor("SyncNotes")
        let base = try await second.pull(SyncedNote.self, query: "SyncNotes")
        #expect(base.kind == .base && base.written == 5)
        await fixture.finish(second)
    }

    @Test func anOldCursorMakesABasePull() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let clock = TestClock()
        let sync = try GQLSync(
            fixture.client, database: db,
            configuration: fixture.configuration {
                $0.baseSyncInterval = .seconds(3600)
                $0.now = { clock.now }
            })
        try await fixture.createNotes(1...6)
        try await sync.pull(SyncedNote.self, query: "SyncNotes")
        // A local edit the server never heard of: a delta pull leaves it, a base pull restores the server's row.
        try SyncedNote.updateOne(db, ["title": "local only"], key: "note-4")

        clock.advance(3000)
        let young = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(young.kind == .delta && young.written == 0)
        #expect(try SyncedNote.fetchOne(db, key: "note-4")?.title == "local only")

        clock.advance(3601)
        let old = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(old.kind == .base && old.written == 6)
        #expect(try SyncedNote.fetchOne(db, key: "note-4")?.title == "title 4")
        let forced = try await sync.pull(SyncedNote.self, query: "SyncNotes", base: true)
        #expect(forced.kind == .base)
        await fixture.finish(sync)
    }

    @Test func aRowWithUnsentItemsIsNotOverwritten() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...3)
        try await sync.pull(SyncedNote.self, query: "SyncNotes")

        // The local change and its mutation commit together; the server refuses it for good (n is no Int), so
        // it stays unsent in the failed list.
        let failed = watchStatus(sync, until: { $0.failedCount == 1 })
        try await db.write { tx in
            try SyncedNote.updateOne(tx, ["title": "mine"], key: "note-2")
            try sync.steady("UpdateNote", ["id": "note-2", "title": "mine", "n": "two"], "note-2", in: tx)
        }
        _ = await failed.value
        try await fixture.retitle("note-2", "theirs")
        try await fixture.retitle("note-3", "theirs too")

        let kept = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(kept.kept == 1 && kept.written == 1)
        #expect(try SyncedNote.fetchOne(db, key: "note-2")?.title == "mine")
        #expect(try SyncedNote.fetchOne(db, key: "note-3")?.title == "theirs too")

        // Once the item is dropped, the next pull is a base pull (a delta pull would not bring the row back: it
        // has not changed on the server since), and the server's row is written.
        let id = try #require(try sync.failedItems().first?.id)
        try sync.drop(id)
        let after = try await sync.pull(SyncedNote.self, query: "SyncNotes")
        #expect(after.kind == .base && after.kept == 0)
        #expect(try SyncedNote.fetchOne(db, key: "note-2")?.title == "theirs")
        await fixture.finish(sync)
    }

    @Test func observersHearPulledRowsWithTheSyncOrigin() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try db.register(SyncedNote.self)
        let heard = GQLLocked<[GQLObserverType]>([])
        let id = try SyncedNote.createObserver(db, [.insert, .delete]) { type, _ in heard.withLock { $0.append(type) } }
        try await fixture.createNotes(1...2)
        try await sync.pull(SyncedNote.self, query: "SyncNotes")
        try await fixture.deleteNote("note-1")
        try await sync.pull(SyncedNote.self, query: "SyncNotes")
        await db.observersIdle()
        #expect(heard.withLock { $0 } == [.insert, .insert, .delete])
        SyncedNote.removeObserver(db, id)
        await fixture.finish(sync)
    }

    @Test func badQueriesAreErrorsAtTheCall() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        await #expect(throws: GQLError.self) { try await sync.pull(SyncedNote.self, query: "NoSuchQuery") }
        await #expect(throws: GQLError.self) { try await sync.pull(SyncedNote.self, query: "ListNotes") }
        await #expect(throws: GQLError.self) { try await sync.pull(SyncedNote.self, query: "CreateNote") }
        let own = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.name = "own" })
        await #expect(throws: GQLError.self) { try await own.pull(SyncedNote.self, query: "SyncNotes") }
        // With the app's database named, an engine on its own file pulls into it; the cursor stays in the outbox.
        try await fixture.createNotes(1...2)
        #expect(try await own.pull(SyncedNote.self, query: "SyncNotes", into: db).written == 2)
        #expect(try await own.pull(SyncedNote.self, query: "SyncNotes", into: db).kind == .delta)
        await fixture.finish(sync, own)
    }
}

/// A delivered mutation's answer reaches the local row.
@Suite(.timeLimit(.minutes(2))) struct AnswerTests {
    @Test func theServersAnswerIsWrittenOnceTheItemIsDelivered() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...2)
        try await sync.pull(SyncedNote.self, query: "SyncNotes")
        try await db.write { tx in
            try SyncedNote.updateOne(tx, ["title": "edited"], key: "note-1")
            try sync.steady("UpdateNote", ["id": "note-1", "title": "edited"], "note-1", in: tx)
        }
        try await sync.drain()
        // The server's _version came back with the answer (UpdateNote selects it).
        #expect(
            try SyncedNote.fetchOne(db, key: "note-1") == SyncedNote(id: "note-1", title: "edited", n: 1, _version: 2))

        // An answer does not undo a later local change still waiting in the outbox (here a refused one, set aside).
        let failed = watchStatus(sync, until: { $0.failedCount == 1 })
        try await db.write { tx in
            try SyncedNote.updateOne(tx, ["title": "first"], key: "note-2")
            try sync.steady("UpdateNote", ["id": "note-2", "title": "first"], "note-2", in: tx)
            try SyncedNote.updateOne(tx, ["title": "second"], key: "note-2")
            try sync.steady("UpdateNote", ["id": "note-2", "title": "second", "n": "two"], "note-2", in: tx)
        }
        _ = await failed.value
        try await sync.drain()
        #expect(try fixture.server.note("note-2")?["title"] == "first")
        #expect(
            try SyncedNote.fetchOne(db, key: "note-2") == SyncedNote(id: "note-2", title: "second", n: 2, _version: 1))
        await fixture.finish(sync)
    }
}
