import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// A claim of the next items that keeps failing (a SQLite error) backs off, and says so on the status; an outbox
/// whose ids leave no room for later items in call order is refused at open.
@Suite(.timeLimit(.minutes(1))) struct ClaimFailureTests {
    @Test func aFailingClaimIsAStatusEventAndTheItemGoesOnceItPasses() async throws {
        let fixture = try await SyncFixture.make()
        let db = try GQLDatabase(path: fixture.directory.path("app.sqlite"))
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        // A lazy item's claim counts its attempt (an UPDATE): this trigger makes every such claim fail.
        try await db.execute(
            "CREATE TRIGGER no_claims BEFORE UPDATE ON _gqlsync_outbox BEGIN SELECT RAISE(ABORT, 'no claims today'); END"
        )
        let failures = onStatus(sync) { statuses in
            var seen: [(Duration, GQLSync.Failure)] = []
            for await status in statuses {
                if case .claimFailed(let delay, let failure)? = status.event { seen.append((delay, failure)) }
                if seen.count == 2 { break }
            }
            return seen
        }
        try await sync.lazy("CreateNote", ["n": 1], "k")
        let seen = await failures.value
        #expect(seen.count == 2)
        for (delay, failure) in seen {
            #expect(delay > .zero)
            #expect(failure.message.contains("no claims today"), "\(failure.message)")
        }
        #expect(sync.pendingCount == 1)

        try await db.execute("DROP TRIGGER no_claims")
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1])
        await fixture.finish(sync)
        try? await db.close()
    }

    @Test func anOutboxWithIdsNearTheLargestIsRefusedAtOpen() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        try await OutboxFileAttackTests.queue(fixture, path, count: 2)
        let configuration = fixture.configuration { $0.delivers = false }
        // The most an outbox may hold: 2^32 ids left above it.
        let highest = Int64.max - OutboxStore.idRoom
        try await OutboxFileAttackTests.edit(path, "UPDATE _gqlsync_outbox SET id = ? WHERE id = 2", [highest])
        let sync = try GQLSync(fixture.client, path: path, configuration: configuration)
        #expect(sync.pendingCount == 2)
        try await sync.shutdown()
        // One more, and SQLite's largest id itself, are refused, naming the table and the id.
        for id in [highest + 1, Int64.max] {
            try await OutboxFileAttackTests.edit(path, "UPDATE _gqlsync_outbox SET id = ? WHERE id <> 1", [id])
            #expect {
                _ = try GQLSync(fixture.client, path: path, configuration: configuration)
            } throws: { error in
                let error = error as? GQLError
                return error?.code == .decoding && error?.table == "_gqlsync_outbox"
                    && error?.message.hasPrefix("_gqlsync_outbox holds id \(id), within 2^32") == true
            }
        }
        await fixture.finish()
    }
}
