import Foundation
import GQLCore
import GQLStore
import Testing

@testable import GQLSync

/// `GQLSync.outboxSummary(inFile:engine:)`, the read-only look `gql-cli sync status` takes: counts and cursors of
/// any layout, read without a change to the file; a later version refused.
@Suite(.timeLimit(.minutes(1))) struct OutboxSummaryTests {
    @Test func anEarlierLayoutIsReadAsItIsAndLeftAsItWas() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("app.sqlite")
        let db = try GQLDatabase(path: path)
        // Layout 7: cursors kept by query alone (no variables column).
        _ = try OutboxStore.migrator(through: 7).migrate(db)
        try await db.execute(
            """
            INSERT INTO _gqlsync_outbox (engine, mode, op, input, state, created_at) VALUES
            ('notes', 'steady', 1, '{}', 'pending', 0), ('notes', 'steady', 1, '{}', 'failed', 0),
            ('notes', 'steady', 1, '{}', 'lost', 0), ('other', 'steady', 1, '{}', 'pending', 0)
            """)
        try await db.execute(
            "INSERT INTO _gqlsync_cursors (engine, query, started_at, taken_at) VALUES ('notes', 'Q', 5, 0)")
        try await db.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let summary = try await GQLSync.outboxSummary(inFile: path, engine: "notes")
        #expect(summary.pendingCount == 1 && summary.failedCount == 2, "\(summary)")
        #expect(summary.cursors == [.init(query: "Q", variables: "", startedAt: 5)])
        #expect(try await GQLSync.outboxSummary(inFile: path, engine: "other").pendingCount == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("")) == ["app.sqlite"])
        #expect(try OutboxStore.migrator.appliedVersion(GQLDatabase(path: path)) == 7)
    }

    @Test func aLaterVersionIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("app.sqlite")
        let db = try GQLDatabase(path: path)
        _ = try OutboxStore.migrator.migrate(db)
        try await db.execute(
            "INSERT INTO gql_migrations (namespace, version, name) VALUES ('gqlsync', 99, 'later')")
        try await db.close()
        await #expect {
            _ = try await GQLSync.outboxSummary(inFile: path, engine: "notes")
        } throws: { error in
            (error as? GQLError)?.code == .downgradeAttempt
                && (error as? GQLError)?.message.contains("at version 99") == true
        }
    }
}
