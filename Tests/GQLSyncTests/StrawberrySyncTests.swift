import Foundation
import GQLCore
import GQLNet
import GQLTestSupport
import Testing

@testable import GQLSync

/// GQLSync delivering to an independent server at its defaults: Strawberry GraphQL (Tests/Interop/
/// strawberry_sync_peer.py), which knows nothing of `Idempotency-Key` and, by default, refuses batched requests
/// (400 "Batching is not enabled").
@Suite(.timeLimit(.minutes(2))) struct StrawberrySyncTests {
    struct Delivered {
        var notes: [Int]
        var posts: Int
        var failed: [GQLSync.FailedItem]
    }

    /// Queues `CreateNote n` for `1...count` while the server cannot be reached, then drains them with an engine
    /// of `batchSize` on the same outbox against the peer; what the peer applied, and how many POSTs it answered.
    static func deliver(count: Int, batchSize: Int, peerArguments: [String] = []) async throws -> Delivered {
        let peer = try await PythonPeer.start("strawberry_sync_peer.py", peerArguments)
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("outbox.sqlite")
        var configuration = GQLSync.Configuration()
        configuration.queries = try syncTestQueries()
        configuration.inputArgument = "input"
        configuration.batchSize = batchSize
        configuration.name = "strawberry"  // one engine, whichever server it has
        configuration.backoff = GQLBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))

        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        var queueing = configuration
        queueing.delivers = false
        let queue = try GQLSync(offline, path: path, configuration: queueing)
        for n in 1...count { try await queue.steady("CreateNote", ["n": n]) }
        try await queue.shutdown()
        try await offline.shutdown()

        let server = GQLServer(HTTP: peer.ready)
        let sync = try GQLSync(server, path: path, configuration: configuration)
        _ = try await OutboxFileAttackTests.within(30, "drain") { try await sync.drain() }
        let failed = try sync.failedItems()
        try await sync.shutdown()
        let answer = try await server.query("query { notes posts }")
        try await server.shutdown()
        await peer.stop()
        return Delivered(
            notes: answer.data?["notes"]?.arrayValue?.compactMap { $0.intValue.map(Int.init) } ?? [],
            posts: Int(answer.data?["posts"]?.intValue ?? -1), failed: failed)
    }

    @Test func itemsSentOneByOneArriveOnceEachInCallOrder() async throws {
        let delivered = try await Self.deliver(count: 30, batchSize: 1)
        #expect(delivered.notes == Array(1...30))
        #expect(delivered.failed.isEmpty)
        #expect(delivered.posts == 31)  // 30 items and the query that read them
    }

    /// At Strawberry's defaults a batch is refused as a whole (400): the engine sends the same items one by one,
    /// and every later claim too, instead of setting them all aside as failed.
    @Test func aServerThatRefusesBatchesGetsTheItemsOneByOne() async throws {
        let delivered = try await Self.deliver(count: 30, batchSize: 10)
        #expect(delivered.failed.map(\.failure.message) == [])
        #expect(delivered.notes == Array(1...30))
        // One refused batch, then 30 single requests (and the query).
        #expect(delivered.posts == 32)
    }

    @Test func aServerThatTakesBatchesGetsThem() async throws {
        let delivered = try await Self.deliver(count: 30, batchSize: 10, peerArguments: ["--batching"])
        #expect(delivered.notes == Array(1...30))
        #expect(delivered.failed.isEmpty)
        #expect(delivered.posts == 4)  // three batches of ten, and the query
    }
}

/// A row of the Strawberry peer's `syncRows` delta query.
struct StrawberryRow: GQLObject, Equatable {
    var id = ""
    var n = 0
    var title = ""
    var _version = 0
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Row" }
}

/// `pull` against Strawberry at its defaults: paging by `nextToken`, the cursor from `startedAt`, tombstones.
@Suite(.timeLimit(.minutes(2))) struct StrawberryPullTests {
    @Test func aPullPagesThroughTheRowsAndTheNextBringsOnlyTheChanges() async throws {
        let peer = try await PythonPeer.start("strawberry_sync_peer.py")
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let server = GQLServer(HTTP: peer.ready)
        #expect(try await server.mutation("mutation { seedRows(count: 25) }").data?["seedRows"] == 25)
        let db = try GQLDatabase(path: directory.path("app.sqlite"))
        try db.register(StrawberryRow.self)
        let queries = GQLQuery()
        try queries.load(
            """
            query SyncRows($limit: Int, $nextToken: String, $lastSync: Float) {
              syncRows(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
                items { id n title _version _deleted } nextToken startedAt
              }
            }
            """, sourceName: "strawberry")
        var configuration = GQLSync.Configuration()
        configuration.queries = queries
        configuration.pullPageSize = 10
        configuration.delivers = false
        let sync = try GQLSync(server, database: db, configuration: configuration)

        let base = try await sync.pull(StrawberryRow.self, query: "SyncRows")
        #expect(base.kind == .base)
        #expect(base.pages == 3)
        #expect(base.written == 25)
        #expect(base.cursor != nil)
        #expect(try StrawberryRow.fetchAll(db, order: "n").map(\.n) == Array(1...25))

        _ = try await server.mutation("mutation { editRow(n: 3, deleted: true) }")
        _ = try await server.mutation(#"mutation { editRow(n: 5, title: "changed") }"#)
        let delta = try await sync.pull(StrawberryRow.self, query: "SyncRows")
        #expect(delta.kind == .delta)
        #expect(delta.deleted == 1)
        #expect(delta.written == 1)
        #expect(try StrawberryRow.fetchAll(db, order: "n").map(\.n) == [1, 2] + Array(4...25))
        #expect(
            try StrawberryRow.fetchOne(db, key: "row-5")
                == StrawberryRow(id: "row-5", n: 5, title: "changed", _version: 2))

        try await sync.shutdown()
        try await db.close()
        try await server.shutdown()
        await peer.stop()
    }
}
