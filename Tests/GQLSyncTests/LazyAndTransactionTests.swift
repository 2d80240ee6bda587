import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

struct Note: GQLObject {
    var id = ""
    var title: String?
    var n = 0
    static func primaryKey() -> String { "id" }
}

/// Lazy coalescing (concurrent callers, an item in flight) and enqueueing inside the app's transaction.
@Suite(.timeLimit(.minutes(2))) struct LazyAndTransactionTests {
    @Test func concurrentLazyCallsMergeIntoOneItem() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        try await sync.steady("CreateNote", ["id": "k", "n": 0])
        // The create is tried (and fails: offline) before the lazy calls, so they cannot merge into it. Decided by
        // the state, not the `.offline` event, which may come before this subscribes.
        _ = await waitForStatus(sync) { !$0.isOnline }
        let fields = ["title", "body"]
        let ids = try await withThrowingTaskGroup(of: Int64.self) { group in
            for i in 0..<16 {
                group.addTask {
                    let field = fields[i % 2]
                    return try await sync.lazy("UpdateNote", ["id": "k", field: "\(field)-\(i)", "n": i], "k")
                }
            }
            return try await group.reduce(into: Set<Int64>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
        #expect(sync.pendingCount == 2)

        try await fixture.server.start()
        sync.resume()
        try await sync.drain()
        // One update carried a field of each kind: the note is at version 2, with both.
        let note = try #require(try fixture.server.note("k"))
        #expect(note["_version"] == 2)
        #expect(note["title"]?.stringValue?.hasPrefix("title-") == true)
        #expect(note["body"]?.stringValue?.hasPrefix("body-") == true)
        await fixture.finish(sync)
    }

    @Test func aLazyCallWhileItsItemIsInFlightBecomesANewItemAfterIt() async throws {
        var faults = GQLDevServer.Faults()
        faults.latencyMilliseconds = 150
        let fixture = try await SyncFixture.make(faults: faults)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        _ = try await sync.force("CreateNote", ["id": "f", "n": 0])
        let inFlight = watchStatus(sync, until: { !$0.inFlight.isEmpty })
        let first = try await sync.lazy("UpdateNote", ["id": "f", "title": "one"], "f")
        let seen = await inFlight.value
        #expect(seen.last?.inFlight == [first])
        // Handed to the network: a later lazy call cannot merge into it.
        let second = try await sync.lazy("UpdateNote", ["id": "f", "body": "two"], "f")
        #expect(second != first)
        try await sync.drain()
        let note = try #require(try fixture.server.note("f"))
        #expect(note["_version"] == 3)
        #expect(note["title"] == "one")
        #expect(note["body"] == "two")
        await fixture.finish(sync)
    }

    @Test func anEnqueueInsideARolledBackWriteVanishesWithIt() async throws {
        let fixture = try await SyncFixture.make()
        let db = try GQLDatabase(path: fixture.directory.path("app.sqlite"))
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try db.write { tx in
                try Note(id: "t", title: "local", n: 1).insert(tx)
                try sync.steady("CreateNote", ["n": 1], "t", in: tx)
                throw Abort()
            }
        }
        #expect(try Note.fetchOne(db, key: "t") == nil)
        #expect(sync.pendingCount == 0)
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers().isEmpty)

        try await db.write { tx in
            try Note(id: "t", title: "local", n: 2).insert(tx)
            try sync.steady("CreateNote", ["n": 2], "t", in: tx)
        }
        // Delivery starts at the commit and may be over already: the server's record below shows the item was queued.
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [2])
        #expect(try Note.fetchOne(db, key: "t")?.n == 2)
        await fixture.finish(sync)
    }

    @Test func aTransactionOfAnotherDatabaseIsRefused() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let db = try GQLDatabase(path: fixture.directory.path("app.sqlite"))
        #expect(throws: GQLError.self) {
            try db.write { tx in try sync.steady("CreateNote", ["id": "x", "n": 1], in: tx) }
        }
        #expect(sync.pendingCount == 0)
        await fixture.finish(sync)
    }
}
