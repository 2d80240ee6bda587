import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// The outbox's layout (steps 3 to 6): ids that only grow without AUTOINCREMENT, the lazy-only key index and the
/// insert's trigger that keeps it right, an outbox of the earlier layout carried over, and the synchronous levels
/// of queued items (`FULL` in the engine's own file) and delivery records (`NORMAL`).
@Suite(.timeLimit(.minutes(2))) struct OutboxLayoutTests {
    @Test func anIdIsNeverGivenAgainAfterTheNewestItemIsDelivered() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let first = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        let a = try await first.steady("CreateNote", ["n": 1])
        try await first.drain()
        // The newest item is gone from the table, its id kept by a tombstone row (step 7), the table's only row; the
        // next item still gets a larger id, and counts leave the tombstone out.
        let rows = try first.database.fetchAll(sql: "SELECT id, state FROM _gqlsync_outbox")
        #expect(rows.map { $0["id"]?.intValue } == [a] && rows.first?["state"]?.stringValue == "removed")
        #expect(try first.outbox.counts() == (pending: 0, failed: 0))
        let b = try await first.steady("CreateNote", ["n": 2])
        #expect(b > a)
        try await first.drain()
        try await first.shutdown()
        let second = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        let c = try await second.steady("CreateNote", ["n": 3])
        #expect(c > b)
        try await second.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3])
        await fixture.finish(second)
    }

    @Test func aLazyCallMergesOnlyIntoTheNewestItemForItsKey() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        let merged = try await sync.lazy("UpdateNote", ["id": "k", "title": "one"], "k")
        let keyBefore = try idempotencyKey(sync, merged)
        #expect(try await sync.lazy("UpdateNote", ["id": "k", "body": "two"], "k") == merged)
        // Its content changed, so it is a new request for a server that drops repeated keys.
        #expect(try idempotencyKey(sync, merged) != keyBefore)

        // A steady call for the key comes after the lazy item: the next lazy call cannot jump over it.
        let steady = try await sync.steady("UpdateNote", ["id": "k", "n": 1], "k")
        let after = try await sync.lazy("UpdateNote", ["id": "k", "title": "three"], "k")
        #expect(after > steady)
        #expect(try await sync.lazy("UpdateNote", ["id": "k", "body": "four"], "k") == after)
        // Another operation's lazy item for the key is newer still; a call of the first merges into neither.
        let other = try await sync.lazy("DeleteNote", ["id": "k"], "k")
        let last = try await sync.lazy("UpdateNote", ["id": "k", "title": "five"], "k")
        #expect(other > after && last > other)
        // A key of its own is unaffected.
        let elsewhere = try await sync.lazy("UpdateNote", ["id": "j", "title": "x"], "j")
        #expect(try await sync.lazy("UpdateNote", ["id": "j", "body": "y"], "j") == elsewhere)
        #expect(sync.pendingCount == 6)
        let values = try sync.outbox.database.fetchAll(
            sql: "SELECT input FROM _gqlsync_outbox WHERE id = ?", [merged]
        ).first?["input"]?.stringValue
        #expect(try GQLValue(json: #require(values)) == ["id": "k", "title": "one", "body": "two"])
        await fixture.finish(sync)
    }

    @Test func anOutboxOfTheEarlierLayoutKeepsItsItemsAndTheirOrder() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let query = try fixture.queries.document(named: "CreateNote").text
        do {
            let old = try GQLDatabase(path: path)
            _ = try OutboxStore.migrator(through: 2).migrate(old)
            for n in 1...3 {
                try await old.execute(
                    """
                    INSERT INTO _gqlsync_outbox (engine, mode, name, key, query, input, wrap, idempotency, created_at)
                    VALUES ('notes', 'steady', 'CreateNote', NULL, ?, ?, 'input', ?, '2026-01-01T00:00:00.000Z')
                    """, [query, "{\"n\":\(n)}", "key-\(n)"])
            }
            // The newest item was delivered by the old engine: its id must not come back.
            try await old.execute("DELETE FROM _gqlsync_outbox WHERE id = 3")
            try await old.close()
        }
        // Step 6 carries the items over: one stored operation, each item's own idempotency key, its date in ms.
        let look = try GQLSync(
            fixture.client, path: path,
            configuration: fixture.configuration {
                $0.name = "notes"
                $0.delivers = false
            })
        let rows = try look.database.fetchAll(
            sql: """
                SELECT id, op, key, input, idempotency, nonce, attempts, created_at FROM _gqlsync_outbox
                WHERE state <> 'removed' ORDER BY id
                """)
        let items = try rows.map { try look.outbox.item(OutboxRow($0), in: look.database) }
        #expect(items.map(\.idempotencyKey) == ["key-1", "key-2"])
        #expect(items.map(\.query) == [query, query])
        #expect(items.map(\.name) == ["CreateNote", "CreateNote"])
        #expect(items.map(\.wrap) == ["input", "input"])
        #expect(rows.map { $0["created_at"]?.intValue } == [1_767_225_600_000, 1_767_225_600_000])
        #expect(try look.database.fetchAll(sql: "SELECT id FROM _gqlsync_operations").count == 1)
        // Step 7: the deleted newest id (3, known from the old AUTOINCREMENT counter) is kept by a tombstone row.
        let tombstones = try look.database.fetchAll(
            sql: "SELECT id, engine FROM _gqlsync_outbox WHERE state = 'removed'")
        #expect(tombstones.map { $0["id"]?.intValue } == [3])
        #expect(look.pendingCount == 2)
        try await look.shutdown()
        // The delivering engine's own count is not read: it starts sending as it opens (`look`'s count above is the
        // carried items'; the server's record below shows both delivered, before the new one).
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.name = "notes" })
        #expect(try await sync.steady("CreateNote", ["n": 4]) == 4)
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 4])
        await fixture.finish(sync)
    }

    @Test func deliveryRecordsCommitAtNormalAndQueuedItemsAtFullInTheEnginesOwnFile() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let level = { @Sendable (tx: GQLTransaction) throws -> Int64? in
            try tx.fetchAll(sql: "PRAGMA synchronous").first?["synchronous"]?.intValue
        }
        #expect(try await sync.outbox.bookkeeping(level) == 1)  // NORMAL, the file's own level: no switch
        #expect(try await sync.outbox.queueWrite(level) == 2)  // FULL, for a queued item
        try await sync.steady("CreateNote", ["n": 1])
        try await sync.drain()
        #expect(try await sync.database.write(level) == 1)  // NORMAL again after a queued item
        #expect(try await sync.outbox.bookkeeping(level) == 1)
        // In the app's database, at its own level (NORMAL by default), nothing is switched.
        let app = try fixture.appDatabase()
        let shared = try GQLSync(
            fixture.client, database: app, configuration: fixture.configuration { $0.name = "app" })
        #expect(try await shared.outbox.bookkeeping(level) == 1)
        #expect(try await shared.outbox.queueWrite(level) == 1)
        #expect(try await app.write(level) == 1)
        // In an app's database opened FULL, queued items commit at FULL with the app's writes, records at NORMAL.
        var options = GQLDatabase.Configuration()
        options.synchronous = .full
        let full = try GQLDatabase(path: fixture.directory.path("full.sqlite"), configuration: options)
        let strict = try GQLSync(
            fixture.client, database: full, configuration: fixture.configuration { $0.name = "full" })
        #expect(try await strict.outbox.bookkeeping(level) == 1)
        #expect(try await strict.outbox.queueWrite(level) == 2)
        #expect(try await full.write(level) == 2)
        await fixture.finish(sync, shared, strict)
    }

    @Test func aKeyedCallThatIsNotLazyTurnsTheKeysLazyItemsSteady() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        let lazy = try await sync.lazy("UpdateNote", ["id": "k", "title": "one"], "k")
        let other = try await sync.lazy("UpdateNote", ["id": "j", "title": "one"], "j")
        _ = try await sync.steady("UpdateNote", ["id": "k", "n": 1], "k")
        let modes = try sync.database.fetchAll(sql: "SELECT id, mode FROM _gqlsync_outbox ORDER BY id")
        #expect(modes.map { $0["mode"]?.stringValue } == ["steady", "lazy", "steady"])
        #expect(modes.map { $0["id"]?.intValue } == [lazy, other, lazy + 2])
        // A steady call without a key leaves the lazy item of j alone.
        _ = try await sync.steady("UpdateNote", ["id": "j", "n": 2])
        #expect(try await sync.lazy("UpdateNote", ["id": "j", "body": "two"], "j") == other)
        try await sync.shutdown()
        // An engine opened on an outbox with lazy items knows it has some, though it queued none yet.
        let reopened = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        _ = try await reopened.steady("UpdateNote", ["id": "j", "n": 3], "j")
        let mode = try reopened.database.fetchAll(sql: "SELECT mode FROM _gqlsync_outbox WHERE id = ?", [other])
        #expect(mode.first?["mode"]?.stringValue == "steady")
        // No trigger is left on the insert (step 5).
        let triggers = try reopened.database.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'")
        #expect(triggers.isEmpty)
        await fixture.finish(reopened)
    }

    private func idempotencyKey(_ sync: GQLSync, _ id: Int64) throws -> String? {
        let row = try sync.outbox.database.fetchAll(
            sql: "SELECT id, op, key, input, idempotency, nonce, attempts FROM _gqlsync_outbox WHERE id = ?", [id])
        return try row.first.map { try sync.outbox.item(OutboxRow($0), in: sync.database).idempotencyKey }
    }
}
