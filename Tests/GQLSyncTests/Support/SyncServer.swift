import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// The models the sync tests use.
let syncTestSchema = """
    type Note @model {
      id: ID!
      title: String
      body: String
      n: Int
    }
    """

/// The operations the sync tests queue, in a registry of their own.
func syncTestQueries() throws -> GQLQuery {
    let queries = GQLQuery()
    try queries.load(
        """
        mutation CreateNote($input: CreateNoteInput!) { createNote(input: $input) { id n } }
        mutation UpdateNote($input: UpdateNoteInput!) { updateNote(input: $input) { id title body n _version } }
        query ListNotes { listNotes { items { id } } }
        mutation DeleteNote($input: DeleteNoteInput!) { deleteNote(input: $input) { id _version } }
        query SyncNotes($limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
          syncNotes(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
            items { id title body n _version _deleted } nextToken startedAt
          }
        }
        subscription OnCreateNote { onCreateNote { id title body n _version _deleted } }
        subscription OnUpdateNote { onUpdateNote { id title body n _version _deleted } }
        subscription OnDeleteNote { onDeleteNote { id _version _deleted } }
        """, sourceName: "sync-tests")
    return queries
}

/// A dev server on a SQLite file in `directory`, restartable on the same port.
final class SyncServer: Sendable {
    let directory: URL
    let faults: GQLDevServer.Faults
    /// Awaited before each WebSocket subscription is registered (GQLDevServer's `beforeSubscriptionStarts`).
    let beforeSubscriptionStarts: (@Sendable (String?) async -> Void)?
    private struct Running: Sendable {
        var server: GQLDevServer
        var task: Task<Void, any Error>
    }
    private let running = GQLLocked<Running?>(nil)
    private let portState = GQLLocked(0)
    private let earlierReplays = GQLLocked(0)

    init(
        directory: URL, faults: GQLDevServer.Faults = .init(),
        beforeSubscriptionStarts: (@Sendable (String?) async -> Void)? = nil
    ) {
        self.directory = directory
        self.faults = faults
        self.beforeSubscriptionStarts = beforeSubscriptionStarts
    }

    var databasePath: String { directory.appendingPathComponent("server.sqlite").path }

    var port: Int { portState.withLock { $0 } }
    var http: String { "http://127.0.0.1:\(port)/graphql" }
    var webSocket: String { "ws://127.0.0.1:\(port)/graphql" }

    /// Starts the server (on the port of its last run, or a free one the first time).
    func start() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.port = port
        configuration.schema = syncTestSchema
        configuration.faults = faults
        configuration.beforeSubscriptionStarts = beforeSubscriptionStarts
        // Loops of its own, so that tests running in parallel cannot hold back its timers and answers.
        configuration.eventLoopThreads = 2
        let server = try GQLDevServer(configuration: configuration, database: GQLDatabase(path: databasePath))
        let task = Task { try await server.run() }
        let endpoints = try await server.endpoints()
        let port = Int(endpoints.http.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0
        portState.withLock { $0 = port }
        running.withLock { $0 = Running(server: server, task: task) }
    }

    func stop() async {
        guard
            let running = running.withLock({ state -> Running? in
                defer { state = nil }
                return state
            })
        else { return }
        await running.server.shutdown()
        _ = try? await running.task.value
        earlierReplays.withLock { $0 += running.server.idempotentReplays }
    }

    /// How many requests the server (in all its runs so far) answered with the answer of an earlier request with
    /// the same `Idempotency-Key` instead of running them again.
    var idempotentReplays: Int {
        earlierReplays.withLock { $0 } + (running.withLock { $0?.server.idempotentReplays } ?? 0)
    }

    /// The server's note `id`.
    func note(_ id: String) throws -> GQLValues? {
        try GQLDatabase(path: databasePath).fetchAll(sql: "SELECT * FROM Note WHERE id = ?", [id]).first
    }

    /// The `n` of every note the server created, in the order it created them: its log of applied creates
    /// (a create sent twice shows twice, under two server-made ids).
    func appliedNumbers() throws -> [Int] {
        try GQLDatabase(path: databasePath).fetchRows(sql: "SELECT n FROM Note ORDER BY rowid").rows.compactMap {
            $0.first?.intValue.map { Int($0) }
        }
    }
}

/// A fresh directory under the temporary directory, removed by `cleanup()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("gqlsync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// A sync test's world: a directory, a running dev server, a client and engines made on them.
struct SyncFixture {
    let directory: TemporaryDirectory
    let server: SyncServer
    let client: GQLServer
    let queries: GQLQuery

    static func make(
        faults: GQLDevServer.Faults = .init(), started: Bool = true,
        beforeSubscriptionStarts: (@Sendable (String?) async -> Void)? = nil
    ) async throws -> SyncFixture {
        let directory = try TemporaryDirectory()
        let server = SyncServer(
            directory: directory.url, faults: faults, beforeSubscriptionStarts: beforeSubscriptionStarts)
        try await server.start()
        if !started { await server.stop() }
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(10)
        return SyncFixture(
            directory: directory, server: server, client: GQLServer(HTTP: server.http, configuration: configuration),
            queries: try syncTestQueries())
    }

    /// Engine settings for tests: short backoffs, input wrapping, this fixture's registry.
    func configuration(_ edit: (inout GQLSync.Configuration) -> Void = { _ in }) -> GQLSync.Configuration {
        var configuration = GQLSync.Configuration()
        configuration.queries = queries
        configuration.inputArgument = "input"
        configuration.backoff = GQLBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        edit(&configuration)
        return configuration
    }

    func finish(_ engines: GQLSync...) async {
        for engine in engines { try? await engine.shutdown() }
        await server.stop()
        try? await client.shutdown()
        directory.cleanup()
    }
}

/// Waits until `sync`'s status matches `predicate`; the statuses seen until then. It subscribes when called: to
/// look for an event that something started next may cause, use ``watchStatus(_:until:)`` before starting it.
@discardableResult
func waitForStatus(_ sync: GQLSync, _ predicate: @Sendable (GQLSync.Status) -> Bool) async -> [GQLSync.Status] {
    await waitForStatus(sync.status.driver.subscribe(), predicate)
}

/// Subscribes to `sync`'s status now, then hands the stream to `body` in a task of its own, so that no status
/// published after this call is missed. (`Task { for await status in sync.status { … } }` subscribes only when the
/// task starts, which on a loaded machine can be after the event it looks for: it then waits for ever.)
func onStatus<T: Sendable>(
    _ sync: GQLSync, _ body: @escaping @Sendable (AsyncStream<GQLSync.Status>) async -> T
) -> Task<T, Never> {
    let stream = sync.status.driver.subscribe()
    return Task { await body(stream) }
}

/// Subscribes to `sync`'s status now and collects, in a task, the statuses until one matches `predicate`.
func watchStatus(
    _ sync: GQLSync, until predicate: @escaping @Sendable (GQLSync.Status) -> Bool
) -> Task<[GQLSync.Status], Never> {
    onStatus(sync) { await waitForStatus($0, predicate) }
}

/// Reads `stream` (a status subscription) until a status matches `predicate`; the statuses seen until then.
@discardableResult
func waitForStatus(
    _ stream: AsyncStream<GQLSync.Status>, _ predicate: @Sendable (GQLSync.Status) -> Bool
) async -> [GQLSync.Status] {
    var seen: [GQLSync.Status] = []
    for await status in stream {
        seen.append(status)
        if predicate(status) { break }
    }
    return seen
}
