import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// A custom conflict strategy that does not decide in time (``GQLSync/Configuration/conflictTimeout``) no longer
/// holds the queue while the engine runs: its item is set aside as failed, saying so, and the items behind it go on.
@Suite(.timeLimit(.minutes(2))) struct ConflictTimeoutTests {
    /// A strategy that holds its first conflict until the test lets it go, then returns `serverWins`, and decides
    /// `clientWins` at once for every later one.
    final class Hesitant: Sendable {
        private let held = GQLLocked<(calls: Int, waiting: [CheckedContinuation<Void, Never>])>((0, []))
        let returned: AsyncStream<Void>
        private let returns: AsyncStream<Void>.Continuation

        init() { (returned, returns) = AsyncStream.makeStream() }

        var calls: Int { held.withLock { $0.calls } }

        var resolution: GQLSync.ConflictResolution {
            .custom { _ in
                let first = self.held.withLock { held -> Bool in
                    held.calls += 1
                    return held.calls == 1
                }
                guard first else { return .clientWins }
                await withCheckedContinuation { continuation in self.held.withLock { $0.waiting.append(continuation) } }
                self.returns.yield()
                return .serverWins
            }
        }

        func release() {
            for continuation in held.withLock({ held in
                defer { held.waiting = [] }; return held.waiting
            }) { continuation.resume() }
        }
    }

    @Test func aStrategyThatDoesNotDecideInTimeSetsItsItemAsideAndTheQueueGoesOn() async throws {
        let fixture = try await SyncFixture.make()
        try await fixture.createNotes(1...1)
        try await fixture.retitle("note-1", "theirs")  // the server's note is at version 2 now
        let hesitant = Hesitant()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration {
                $0.conflictResolution = hesitant.resolution
                $0.conflictTimeout = .milliseconds(300)
            })
        let failedEvent = onStatus(sync) { statuses in
            await waitForStatus(statuses) { if case .failed? = $0.event { true } else { false } }.last?.event
        }
        let stale = try await sync.steady("UpdateNote", ["id": "note-1", "title": "mine", "_version": 1], "note-1")
        for n in 10...12 { try await sync.steady("CreateNote", ["n": n]) }

        // The items behind the undecided conflict are delivered, in order.
        let drained = try await OutboxFileAttackTests.within(20, "the drain behind an undecided conflict") {
            try await sync.drain()
        }
        guard drained != nil else {
            hesitant.release()
            await fixture.finish(sync)
            return
        }
        #expect(try fixture.server.appliedNumbers() == [1, 10, 11, 12])
        let failed = try sync.failedItems()
        #expect(failed.map(\.id) == [stale])
        let message = failed.first?.failure.message ?? ""
        #expect(message.hasPrefix("the conflict strategy did not decide within 0.3 seconds; "), "\(message)")
        #expect(sync.pendingCount == 0 && sync.driver.current.failedCount == 1)
        // The status said so.
        guard case .failed(let id, let failure)? = await failedEvent.value else {
            Issue.record("no failed event")
            return
        }
        #expect(id == stale && failure.message == message)

        // The strategy returns (serverWins) after the time ran out: nothing comes of it.
        hesitant.release()
        var returned = hesitant.returned.makeAsyncIterator()
        await returned.next()
        try await sync.steady("CreateNote", ["n": 13])
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 10, 11, 12, 13])
        #expect(try sync.failedItems() == failed)
        #expect(try fixture.server.note("note-1")?["title"] == "theirs")

        // retry puts it back like any failed item: the strategy is asked again (clientWins now) and it is sent.
        try sync.retry(stale)
        try await sync.drain()
        #expect(hesitant.calls == 2)
        #expect(try sync.failedItems().isEmpty)
        #expect(try fixture.server.note("note-1")?["title"] == "mine")
        await fixture.finish(sync)
    }

    @Test func aTimeoutOfZeroOrLessIsRefused() async throws {
        let fixture = try await SyncFixture.make(started: false)
        for timeout: Duration in [.zero, .seconds(-1)] {
            #expect {
                _ = try GQLSync(
                    fixture.client, path: fixture.directory.path("outbox.sqlite"),
                    configuration: fixture.configuration { $0.conflictTimeout = timeout })
            } throws: { error in
                (error as? GQLError)?.code == .invalidArgument
                    && (error as? GQLError)?.message.contains("conflictTimeout must be longer than zero") == true
            }
        }
        #expect(ConflictHandler.words(.seconds(60)) == "60 seconds")
        #expect(ConflictHandler.words(.seconds(1)) == "1 second")
        #expect(ConflictHandler.words(.milliseconds(250)) == "0.25 seconds")
        await fixture.finish()
    }
}
