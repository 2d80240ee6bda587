import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Custom conflict strategies that misbehave: one that never returns (and ignores its cancellation) holds neither
/// the engine's shutdown nor the item, which stays queued for the next engine.
@Suite(.timeLimit(.minutes(2))) struct ConflictAttackTests {
    /// A strategy that returns only when the test lets it, whatever happens to its task.
    final class Stuck: Sendable {
        private let held = GQLLocked<[CheckedContinuation<Void, Never>]>([])
        let entered: AsyncStream<Int64>
        private let enter: AsyncStream<Int64>.Continuation

        init() { (entered, enter) = AsyncStream.makeStream() }

        var resolution: GQLSync.ConflictResolution {
            .custom { conflict in
                self.enter.yield(conflict.id)
                await withCheckedContinuation { continuation in self.held.withLock { $0.append(continuation) } }
                return .clientWins
            }
        }

        /// Lets every held strategy return (the engine that asked is gone by then).
        func release() {
            for continuation in held.withLock({ held in
                defer { held = [] }; return held
            }) { continuation.resume() }
        }
    }

    @Test func aStrategyThatNeverReturnsDoesNotHoldTheShutdownAndTheItemStaysQueued() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        try await fixture.createNotes(1...1)
        try await fixture.retitle("note-1", "theirs")  // the server's note is at version 2 now
        let stuck = Stuck()
        let sync = try GQLSync(
            fixture.client, path: path,
            configuration: fixture.configuration { $0.conflictResolution = stuck.resolution })
        let id = try await sync.steady("UpdateNote", ["id": "note-1", "title": "mine", "_version": 1], "note-1")
        var entered = stuck.entered.makeAsyncIterator()
        #expect(await entered.next() == id)

        // The shutdown ends although the strategy never does.
        let clock = ContinuousClock()
        let started = clock.now
        // The first of the shutdown's end and a 10 s timer (a group would wait for a shutdown that hangs).
        let (ends, end) = AsyncStream<Bool>.makeStream()
        Task {
            try? await sync.shutdown()
            end.yield(true)
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(10))
            end.yield(false)
        }
        let finished = await ends.first { _ in true } ?? false
        timer.cancel()
        guard finished else {
            Issue.record("shutdown still waits for the conflict strategy after 10 s")
            stuck.release()
            return
        }
        #expect(clock.now - started < .seconds(5))

        // The item is still queued, not failed, with its values; the server kept its own title.
        let next = try GQLSync(
            fixture.client, path: path,
            configuration: fixture.configuration {
                $0.delivers = false
                $0.conflictResolution = .serverWins
            })
        #expect(next.pendingCount == 1)
        #expect(try next.failedItems().isEmpty)
        let input = try next.database.fetchAll(sql: "SELECT input FROM _gqlsync_outbox WHERE id = ?", [id])
        let values = try GQLValue(json: #require(input.first?["input"]?.stringValue))
        #expect(values == ["id": "note-1", "title": "mine", "_version": 1])
        #expect(try fixture.server.note("note-1")?["title"] == "theirs")
        stuck.release()
        await fixture.finish(next)
    }
}
