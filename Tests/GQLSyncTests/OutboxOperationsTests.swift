import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Outbox step 6: each operation's text stored once, compact idempotency keys, dates as numbers — and the text an
/// item sends is still the one captured at its call.
@Suite(.timeLimit(.minutes(2))) struct OutboxOperationsTests {
    @Test func anOperationIsStoredOnceAndAnItemKeepsTheTextOfItsCall() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let first = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...3 { try await first.steady("CreateNote", ["n": n]) }
        #expect(try operations(first.database).count == 1)
        try await first.shutdown()
        // Another registry whose CreateNote selects more: a new row; the items queued before keep their text.
        let other = GQLQuery()
        let longer = "mutation CreateNote($input: CreateNoteInput!) { createNote(input: $input) { id n title } }"
        try other.load(longer, sourceName: "other")
        let second = try GQLSync(
            fixture.client, path: path,
            configuration: fixture.configuration {
                $0.queries = other
                $0.delivers = false
            })
        try await second.steady("CreateNote", ["n": 4])
        let stored = try operations(second.database)
        #expect(stored.count == 2)
        let texts = try items(second).map(\.query)
        let original = try fixture.queries.document(named: "CreateNote").text
        #expect(texts == [original, original, original, longer])
        try await second.shutdown()
        // Delivered with their own texts, in order; once nothing names them, the next open removes them.
        let third = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        try await third.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3, 4])
        try await third.shutdown()
        let fourth = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(try operations(fourth.database).isEmpty)
        await fixture.finish(fourth)
    }

    @Test func anOperationRemovedUnderAnEngineIsStoredAgain() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let app = try fixture.appDatabase()
        let sync = try GQLSync(
            fixture.client, database: app, configuration: fixture.configuration { $0.delivers = false })
        let a = try await sync.steady("CreateNote", ["n": 1])
        try await sync.drainOutboxForTest(a)
        // Another engine's open removed the unused operation that this one remembers.
        try await app.execute("DELETE FROM _gqlsync_operations")
        let b = try await sync.steady("CreateNote", ["n": 2])
        #expect(b > a)
        #expect(try operations(app).count == 1)
        #expect(try items(sync).map { try $0.values() } == [["n": 2]])
        await fixture.finish(sync)
    }

    @Test func anOperationAddedByARolledBackWriteIsNotRemembered() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let app = try fixture.appDatabase()
        let sync = try GQLSync(
            fixture.client, database: app, configuration: fixture.configuration { $0.delivers = false })
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try app.write { tx in
                try sync.steady("CreateNote", ["n": 1], in: tx)
                throw Refused()
            }
        }
        #expect(try operations(app).isEmpty)
        let operation = OutboxStore.Operation(
            name: "CreateNote", query: try fixture.queries.document(named: "CreateNote").text, wrap: "input")
        #expect(sync.outbox.operations.id(of: operation) == nil)
        try await app.write { tx in try sync.steady("CreateNote", ["n": 2], in: tx) }
        #expect(try operations(app).count == 1)
        #expect(try sync.outbox.operations.id(of: operation) == operations(app).first?["id"]?.intValue)
        #expect(try items(sync).map { try $0.values() } == [["n": 2]])
        await fixture.finish(sync)
    }

    @Test func idempotencyKeysAreDistinctAndStableAcrossReopening() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        let sync = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...50 { try await sync.steady("CreateNote", ["n": n]) }
        let keys = try items(sync).map(\.idempotencyKey)
        #expect(Set(keys).count == 50)
        // Nothing of the key is stored as text in a new row: 8 bytes of nonce.
        let stored = try sync.database.fetchAll(
            sql: "SELECT count(*) AS n FROM _gqlsync_outbox WHERE idempotency IS NULL AND typeof(nonce) = 'integer'")
        #expect(stored.first?["n"]?.intValue == 50)
        try await sync.shutdown()
        let reopened = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(try items(reopened).map(\.idempotencyKey) == keys)
        let dates = try reopened.database.fetchAll(sql: "SELECT created_at FROM _gqlsync_outbox")
        let now = Date().timeIntervalSince1970 * 1000
        #expect(dates.allSatisfy { abs(Double($0["created_at"]?.intValue ?? 0) - now) < 600_000 })
        await fixture.finish(reopened)
    }

    @Test func valuesAreWrittenAsGQLValueWritesThem() throws {
        let strings = ["", "plain", "q\"uote", "back\\slash", "line\nfeed\r\ttab", "\u{1}\u{1f}", "é ü 日本 🎉"]
        for text in strings {
            #expect(try OutboxJSON.value(.string(text)) == GQLValue.string(text).jsonString())
        }
        for number in [0, 7, -7, 1_234_567_890_123, Int64.max, Int64.min] {
            #expect(try OutboxJSON.value(.int(number)) == String(number))
        }
        let values: GQLValues = [
            "s": "a\"b", "i": -42, "b": true, "n": .null, "d": 1.5, "a": [1, "x"], "o": ["k": ["z": 1]],
        ]
        let convertible: [String: any GQLValueConvertible] = ["s": "a\"b", "i": -42, "b": true, "d": 1.5]
        #expect(try GQLValue(json: OutboxJSON.object(values)) == .object(values))
        #expect(try GQLValue(json: OutboxJSON.object(convertible)) == .object(convertible.mapValues(\.gqlValue)))
        #expect(try OutboxJSON.object(GQLValues()) == "{}")
    }

    private func operations(_ database: GQLDatabase) throws -> [GQLValues] {
        try database.fetchAll(sql: "SELECT id, name, query, wrap FROM _gqlsync_operations ORDER BY id")
    }

    private func items(_ sync: GQLSync) throws -> [OutboxItem] {
        let rows = try sync.database.fetchAll(
            sql: """
                SELECT id, op, key, input, idempotency, nonce, attempts FROM _gqlsync_outbox
                WHERE state <> 'removed' ORDER BY id
                """)
        return try rows.map { try sync.outbox.item(OutboxRow($0), in: sync.database) }
    }
}

extension GQLSync {
    /// Removes the item `id` as a delivery would (the outbox's own delete), without a server.
    fileprivate func drainOutboxForTest(_ id: Int64) async throws {
        let outbox = outbox
        try await outbox.queueWrite { tx in try outbox.delete([id], in: tx) }
    }
}
