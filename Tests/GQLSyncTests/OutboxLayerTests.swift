import Foundation
import GQLCache
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Outbox layers: an item's optimistic answer shows in the engine's cache while the item waits, across a restart,
/// and is replaced by the server's answer on delivery or rolled back when the item is set aside.
@Suite(.timeLimit(.minutes(2))) struct OutboxLayerTests {
    static let noteQuery = CacheFeedTests.noteQuery

    static func title(_ cache: GQLCache) throws -> GQLValue? {
        try cache.read(noteQuery, ["id": "note-1"])["getNote"]?["title"]
    }

    /// An update that asks for no key of the note it changes.
    static let retitle = "mutation RetitleNote($input: UpdateNoteInput!) { updateNote(input: $input) { title } }"

    static func optimistic(_ title: String) -> GQLValue {
        ["updateNote": ["__typename": "Note", "id": "note-1", "title": .string(title)]]
    }

    /// A note, the server stopped (so items wait), the app's cache with the note's title "old", and an engine with
    /// a pending `operation` retitling the note to "sent" whose optimistic answer is `optimistic`.
    static func pendingItem(_ operation: String, optimistic: GQLValue) async throws
        -> (SyncFixture, GQLDatabase, GQLCache, GQLSync)
    {
        let fixture = try await SyncFixture.make()
        try fixture.queries.load(Self.retitle, sourceName: "keyless")
        try await fixture.createNotes(1...1)
        await fixture.server.stop()  // items wait
        let db = try fixture.appDatabase()
        let (cache, _) = try CacheFeedTests.watchedCache(db, fixture.client)
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        try sync.steady(operation, ["id": "note-1", "title": "sent"], "note-1", optimistic: optimistic)
        return (fixture, db, cache, sync)
    }

    /// The app started again: a new cache of `db` (`beforeEngine` sees it with no layers) and a new engine, which
    /// shows its pending items' answers as it opens.
    static func reopen(_ fixture: SyncFixture, _ db: GQLDatabase, beforeEngine: (GQLCache) throws -> Void) throws
        -> (GQLCache, GQLSync)
    {
        let reopened = try GQLCache(database: db)
        try beforeEngine(reopened)
        let sync = try GQLSync(
            fixture.client, database: db, configuration: fixture.configuration { $0.cache = reopened })
        return (reopened, sync)
    }

    /// `RetitleNote` asks for no key (`updateNote { title }`; review 2.1): the server's answer, whose object has no
    /// `id`, replaces the layer over the note the optimistic answer named, and the watch sees the server's title,
    /// not the optimistic one and not the old one (before, nothing was written and the view went back to "old").
    @Test(arguments: ["UpdateNote", "RetitleNote"])
    func theAnswerShowsAcrossARestartAndIsReplacedOnDelivery(operation: String) async throws {
        let (fixture, db, cache, first) = try await Self.pendingItem(operation, optimistic: Self.optimistic("saving"))
        #expect(try Self.title(cache) == "saving")
        #expect(try cache.record("Note:note-1")?["title"] == "saving")
        try await first.shutdown()

        // The app starts again: a new cache has no layers until the engine opens and shows the pending item's.
        let (reopened, second) = try Self.reopen(fixture, db) { cache throws in
            #expect(try Self.title(cache) == "old")
        }
        #expect(try Self.title(reopened) == "saving")
        var watch = reopened.watch(fixture.client, Self.noteQuery, ["id": "note-1"], policy: .cacheOnly)
            .makeAsyncIterator()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "saving")

        try await fixture.server.start()
        second.resume()
        try await second.drain()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "sent")
        #expect(try reopened.record("Note:note-1")?["title"] == "sent")
        #expect(reopened.optimisticLayerCount == 0)
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").isEmpty)
        await fixture.finish(second)
    }

    /// Review L7: a pending item whose optimistic answer names no key (so its layer is stored under the mutation's
    /// path, as in ``anAnswerWithoutAnyKeyIsStoredUnderTheMutationsPath()``) shows it again once the app starts
    /// again and the engine opens, and on delivery the server's answer takes its place: `RetitleNote`'s, keyless
    /// too, under that path; `UpdateNote`'s, which has the note's id, in the note's record (the note's watch sees
    /// it). The layer's row goes.
    @Test(arguments: ["RetitleNote", "UpdateNote"])
    func aKeylessAnswerShowsAcrossARestartAndIsReplacedOnDelivery(operation: String) async throws {
        let (fixture, db, cache, first) = try await Self.pendingItem(
            operation, optimistic: ["updateNote": ["__typename": "Note", "title": "saving"]])
        // Both operations' `updateNote` field has the same arguments: `RetitleNote`'s text reads either's answer.
        let variables: [String: any GQLValueConvertible] = ["input": ["id": "note-1", "title": "sent"] as GQLValues]
        #expect(try cache.read(Self.retitle, variables)["updateNote"]?["title"] == "saving")
        #expect(try Self.title(cache) == "old", "no note is named")
        try await first.shutdown()

        let (reopened, second) = try Self.reopen(fixture, db) { cache throws in
            #expect(throws: GQLError.self, "no layer before the engine opens") {
                try cache.read(Self.retitle, variables)
            }
        }
        #expect(try reopened.read(Self.retitle, variables)["updateNote"]?["title"] == "saving")
        #expect(reopened.optimisticLayerCount == 1)
        var watch = reopened.watch(fixture.client, Self.noteQuery, ["id": "note-1"], policy: .cacheOnly)
            .makeAsyncIterator()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "old")

        try await fixture.server.start()
        second.resume()
        try await second.drain()
        if operation == "RetitleNote" {
            #expect(try reopened.read(Self.retitle, variables)["updateNote"]?["title"] == "sent")
        } else {
            #expect(try await watch.next()?.data?["getNote"]?["title"] == "sent")
            #expect(try reopened.record("Note:note-1")?["title"] == "sent")
            // As for any delivered answer with a key: the note has its record, the mutation's root no field.
            #expect(try reopened.record("MUTATION_ROOT") == nil)
        }
        #expect(reopened.optimisticLayerCount == 0)
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").isEmpty)
        await fixture.finish(second)
    }

    @Test func anItemSetAsideRollsItsAnswerBack() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let (cache, _) = try CacheFeedTests.watchedCache(db, fixture.client)
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        // The server has no note-1: it refuses the update, and the item is set aside (or dropped as a conflict).
        try sync.steady(
            "UpdateNote", ["id": "note-1", "title": "refused"], "note-1", optimistic: Self.optimistic("refused"))
        try await sync.drain()
        #expect(try Self.title(cache) == "old")
        #expect(cache.optimisticLayerCount == 0)
        // The stored answer stays while the item is failed, for a retry (see the next test).
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").count == 1)
        // Without a cache, an optimistic answer is refused.
        let plain = try GQLSync(
            fixture.client, database: db, configuration: fixture.configuration { $0.name = "plain" })
        #expect(throws: GQLError.self) {
            try plain.steady("UpdateNote", ["id": "note-1"], "note-1", optimistic: Self.optimistic("x"))
        }
        await fixture.finish(sync, plain)
    }

    @Test func retryingASetAsideItemShowsItsAnswerAgainAcrossARestartAndDroppingForgetsIt() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let (cache, _) = try CacheFeedTests.watchedCache(db, fixture.client)
        let first = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        // The server has no note-1 yet: both updates are refused and set aside, their answers rolled back.
        for title in ["retried", "dropped"] {
            try first.steady(
                "UpdateNote", ["id": "note-1", "title": title], "note-1", optimistic: Self.optimistic(title))
        }
        try await first.drain()
        let failed = try first.failedItems().sorted { $0.id < $1.id }
        try #require(failed.count == 2, "\(failed)")
        #expect(try Self.title(cache) == "old" && cache.optimisticLayerCount == 0)
        // Their rows stay, for a retry, also across a restart (hidden there too).
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").count == 2)
        try await first.shutdown()
        let reopened = try GQLCache(database: db)
        let second = try GQLSync(
            fixture.client, database: db, configuration: fixture.configuration { $0.cache = reopened })
        #expect(try Self.title(reopened) == "old" && reopened.optimisticLayerCount == 0)
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic").count == 2)

        // Dropped: its row goes.
        try second.drop(failed[1].id)
        #expect(try db.fetchAll(sql: "SELECT item FROM _gqlsync_optimistic") == [["item": .int(failed[0].id)]])
        // Retried while the server is down (so the item waits): its answer shows again at once.
        await fixture.server.stop()
        try second.retry(failed[0].id)
        #expect(try Self.title(reopened) == "retried" && reopened.optimisticLayerCount == 1)
        #expect(try second.failedItems().isEmpty)
        // Retrying an item that is not failed is refused and leaves its layer alone.
        #expect(throws: GQLError.self) { try second.retry(failed[0].id) }
        #expect(try Self.title(reopened) == "retried" && reopened.optimisticLayerCount == 1)
        await fixture.finish(second)
    }

    /// Two retries of one set-aside item race, scripted: the first has shown the item's answer and waits before the
    /// outbox's retry while the second is started. Whichever wins, the item is pending again and its answer must
    /// stay shown (the refused retry once took the surviving layer away).
    @Test func twoRacingRetriesOfOneItemLeaveItsAnswerShown() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let (cache, _) = try CacheFeedTests.watchedCache(db, fixture.client)
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        try sync.steady(
            "UpdateNote", ["id": "note-1", "title": "raced"], "note-1", optimistic: Self.optimistic("raced"))
        try await sync.drain()
        let id = try #require(try sync.failedItems().first?.id)
        await fixture.server.stop()  // the retried item waits
        let layers = try #require(sync.driver.layers)
        let shown = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let paused = GQLLocked(false)
        layers.afterShowing.withLock {
            $0 = { _ in
                // Only the first retry to show the answer pauses.
                guard
                    paused.withLock({ was in
                        defer { was = true }; return !was
                    })
                else { return }
                shown.signal()
                proceed.wait()
            }
        }
        let first = Task { await onThread { Result { try sync.retry(id) } } }
        await onThread { shown.wait() }
        let secondDone = GQLLocked(false)
        let second = Task {
            await onThread {
                defer { secondDone.withLock { $0 = true } }
                return Result { try sync.retry(id) }
            }
        }
        // Let the first go on once the second is done or queued behind it.
        while layers.retriesWaiting.withLock({ $0 }) == 0, !secondDone.withLock({ $0 }) {
            try await Task.sleep(for: .milliseconds(1))
        }
        proceed.signal()
        let outcomes = [await first.value, await second.value]
        let refusals = outcomes.compactMap { outcome -> GQLError? in
            guard case .failure(let error) = outcome else { return nil }
            return error as? GQLError
        }
        #expect(outcomes.count { if case .success = $0 { true } else { false } } == 1, "\(outcomes)")
        #expect(refusals.map(\.code) == [.notFound], "\(outcomes)")
        #expect(try Self.title(cache) == "raced" && cache.optimisticLayerCount == 1)
        #expect(try sync.failedItems().isEmpty && sync.pendingCount == 1)
        await fixture.finish(sync)
    }

    // MARK: The delivered answer, normalized through the item's operation

    /// A server whose schema has `Note.author` (the dev server has no relations), on 127.0.0.1: it answers every
    /// mutation with `answer`, the first one only once `release` is set (at most 10 s, a bound for a test gone
    /// wrong), so the test sees the optimistic answer first. Its answers carry no `__typename`: GQLSync sends the
    /// app's text.
    static func authorServer(
        _ answer: String, release: GQLLocked<Bool>
    ) throws -> HostileServer {
        try HostileServer { index, _ in
            let deadline = ContinuousClock.now + .seconds(10)
            while index == 0, !release.withLock({ $0 }), ContinuousClock.now < deadline { usleep(1_000) }
            return .json(#"{"data": \#(answer)}"#)
        }
    }

    /// Review 2.1: a delivered answer's nested keyed object becomes its record (referenced from the note), so a
    /// watch of another query reading that object sees the server's version. Before, the author was stored as a
    /// plain value inside the note, and the author's watch went back to the old name when the layer came off.
    @Test func aDeliveredAnswersNestedObjectReachesAnotherQuerysWatch() async throws {
        let release = GQLLocked(false)
        let server = try Self.authorServer(
            #"{"updateNote": {"id": "note-1", "title": "sent", "author": {"id": "a1", "name": "Ada Lovelace"}}}"#,
            release: release)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let client = GQLServer(HTTP: server.url)
        let db = try GQLDatabase(path: directory.path("app.sqlite"))
        let cache = try GQLCache(database: db)
        let authorQuery = "query($id: ID!) { author(id: $id) { id name } }"
        try cache.write(
            authorQuery, ["id": "a1"], data: ["author": ["__typename": "Author", "id": "a1", "name": "Ada"]])
        var watch = cache.watch(client, authorQuery, ["id": "a1"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.data?["author"]?["name"] == "Ada")
        // A watch of another author, which neither the layer nor the answer touches.
        try cache.write(
            authorQuery, ["id": "a2"], data: ["author": ["__typename": "Author", "id": "a2", "name": "Grace"]])
        var other = cache.watch(client, authorQuery, ["id": "a2"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await other.next()?.data?["author"]?["name"] == "Grace")
        let queries = GQLQuery()
        try queries.load(
            "mutation UpdateNote($input: UpdateNoteInput!) { updateNote(input: $input) { id title author { id name } } }",
            sourceName: "author-tests")
        var configuration = GQLSync.Configuration()
        configuration.queries = queries
        configuration.inputArgument = "input"
        configuration.cache = cache
        let sync = try GQLSync(client, database: db, configuration: configuration)
        try sync.steady(
            "UpdateNote", ["id": "note-1", "title": "sent"], "note-1",
            optimistic: [
                "updateNote": [
                    "__typename": "Note", "id": "note-1", "title": "saving",
                    "author": ["__typename": "Author", "id": "a1", "name": "Ada (saving)"],
                ]
            ])
        #expect(try await watch.next()?.data?["author"]?["name"] == "Ada (saving)")
        release.withLock { $0 = true }
        try await sync.drain()
        #expect(try await watch.next()?.data?["author"]?["name"] == "Ada Lovelace")
        #expect(try cache.record("Note:note-1")?["author"] == ["__ref": "Author:a1"])
        #expect(try cache.record("Note:note-1")?["title"] == "sent")
        #expect(cache.optimisticLayerCount == 0)
        // The root record of the mutation gains no field per delivered item: the note has a record of its own.
        #expect(try cache.record("MUTATION_ROOT") == nil)
        #expect(server.requestCount == 1)
        // The other author's watch heard nothing of it: its next answer is the write that follows.
        try cache.write(
            authorQuery, ["id": "a2"], data: ["author": ["__typename": "Author", "id": "a2", "name": "Grace H."]])
        #expect(try await other.next()?.data?["author"]?["name"] == "Grace H.")
        try await sync.shutdown()
        try? await client.shutdown()
    }

    /// Review 2.1: an answer whose object has no key anywhere (neither the server's answer nor the optimistic one
    /// names an id) is stored under the mutation's path, where the optimistic one was: reading the mutation gives
    /// the server's answer, not the optimistic one and not a miss (before, the layer came off and nothing stood
    /// in its place).
    @Test func anAnswerWithoutAnyKeyIsStoredUnderTheMutationsPath() async throws {
        let fixture = try await SyncFixture.make()
        let retitle = Self.retitle
        try fixture.queries.load(retitle, sourceName: "keyless")
        try await fixture.createNotes(1...1)
        let db = try fixture.appDatabase()
        let cache = try GQLCache(database: db)
        await fixture.server.stop()  // the item waits
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.cache = cache })
        try sync.steady(
            "RetitleNote", ["id": "note-1", "title": "sent"], "note-1",
            optimistic: ["updateNote": ["__typename": "Note", "title": "saving"]])
        let variables: [String: any GQLValueConvertible] = ["input": ["id": "note-1", "title": "sent"] as GQLValues]
        #expect(try cache.read(retitle, variables)["updateNote"]?["title"] == "saving")
        try await fixture.server.start()
        sync.resume()
        try await sync.drain()
        #expect(try cache.read(retitle, variables)["updateNote"]?["title"] == "sent")
        #expect(cache.optimisticLayerCount == 0)
        await fixture.finish(sync)
    }
}
