import Foundation
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Custom conflict strategies that misbehave: one that never returns (and ignores its cancellation) holds neither
/// the engine's shutdown nor the item, which stays queued for the next engine. Server items of the wrong shape in
/// a conflict (``HostileServer``) are refused by `serverWins` as a pull refuses them.
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

        // The shutdown ends although the strategy never does. The shutdown has no timer of its own (it cancels the
        // delivery task), so ending at all is the outcome; the 10 s timer only keeps a shutdown that hangs from
        // hanging the suite, and is generous for one that takes milliseconds (a group would wait for the hang).
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

    /// A `ConflictUnhandled` answer to `updateNote` carrying `item` as the server's.
    static func conflict(_ item: String) -> HostileServer.Reply {
        .json(
            #"{"data":{"updateNote":null},"errors":[{"message":"stale","path":["updateNote"],"#
                + #""extensions":{"errorType":"ConflictUnhandled","data":"# + item + "}}]}")
    }

    /// An engine that delivers, with the default `serverWins`, on an app database holding note "a" (title "mine",
    /// version 1), and a server answering `script` (the pull attack suite's world).
    static func world(_ script: @escaping @Sendable (Int, String) -> HostileServer.Reply) throws
        -> PullAttackTests.World
    {
        let world = try PullAttackTests.World(
            {
                $0.inputArgument = "input"
                $0.delivers = true
            }, pages: script)
        try SyncedNote(id: "a", title: "mine", _version: 1).insert(world.db)
        return world
    }

    @Test(arguments: [
        (#"{"id":"a","title":"theirs","_version":"3"}"#, "has a _version that is String, not a whole number"),
        (#"{"id":"a","title":"theirs","_deleted":"true"}"#, "has a _deleted that is String, not a Bool"),
        (#"{"id":{"x":1},"title":"theirs"}"#, "has a 'id' key that is Object, not a string or a number"),
        (#"{"title":"theirs","_version":3}"#, "is not an object with a 'id' key"),
    ])
    func serverWinsRefusesAServerItemOfTheWrongShape(item: String, message: String) async throws {
        let world = try Self.world { _, _ in Self.conflict(item) }
        let id = try await world.sync.steady("UpdateNote", ["id": "a", "title": "mine", "_version": 1], "a")
        try await world.sync.drain()

        // Set aside with what was wrong; the local row is as it was.
        let failed = try world.sync.failedItems()
        #expect(failed.map(\.id) == [id])
        let text = failed.first?.failure.message ?? ""
        #expect(text.contains("the server's item could not be written locally") && text.contains(message), "\(text)")
        #expect(try SyncedNote.fetchOne(world.db, key: "a") == SyncedNote(id: "a", title: "mine", _version: 1))
        #expect(world.hostile.requestCount == 1)
        await world.finish()
    }

    @Test func serverWinsKeepsTheServersItemOutWhileALaterChangeWaits() async throws {
        // The first request meets a conflict; the second (the later change) is never answered.
        let world = try Self.world { index, _ in
            index == 0 ? Self.conflict(#"{"id":"a","title":"theirs","_version":3}"#) : .hang
        }
        let sync = world.sync
        let conflicted = onStatus(sync) { statuses in
            await waitForStatus(statuses) { if case .conflict? = $0.event { true } else { false } }
        }
        try await world.db.write { tx in
            try sync.steady("UpdateNote", ["id": "a", "title": "mine", "_version": 1], "a", in: tx)
            try sync.steady("UpdateNote", ["id": "a", "title": "mine again", "_version": 1], "a", in: tx)
        }
        _ = await conflicted.value
        // The change queued after it wins until it is sent: the server's item is kept out of the row.
        #expect(try SyncedNote.fetchOne(world.db, key: "a")?.title == "mine")
        #expect(sync.pendingCount == 1)
        #expect(try sync.failedItems().isEmpty)
        await world.finish()
    }
}
