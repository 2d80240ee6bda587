import Foundation
import GQLCache
import GQLDevServer
import GQLTestSupport
import Testing

/// The models the cache tests serve.
let cacheTestSchema = """
    type Note @model {
      id: ID!
      title: String
      body: String
      n: Int
      tags: [String]
      meta: AWSJSON
    }
    """

/// The operations the cache tests run, in a registry of their own.
func cacheTestQueries() throws -> GQLQuery {
    let queries = GQLQuery()
    try queries.load(
        """
        query GetNote($id: ID!) { getNote(id: $id) { id title n } }
        query GetNoteBody($id: ID!) { getNote(id: $id) { id body } }
        query GetNoteTitle($id: ID!) { note: getNote(id: $id) { title } }
        query ListNotes($limit: Int) { listNotes(limit: $limit) { items { id title } nextToken } }
        mutation CreateNote($input: CreateNoteInput!) { createNote(input: $input) { id title n } }
        mutation UpdateNote($input: UpdateNoteInput!) { updateNote(input: $input) { id title n } }
        """, sourceName: "cache-tests")
    return queries
}

/// A cache test's world: a dev server on 127.0.0.1 (as `gql-cli serve` runs it, in process) with notes, a client
/// of it, and a cache in a SQLite file.
final class CacheFixture: Sendable {
    let directory: TemporaryDirectory
    let server: GQLDevServer
    let serverTask: Task<Void, any Error>
    let client: GQLServer
    let queries: GQLQuery
    let cache: GQLCache

    private init(
        directory: TemporaryDirectory, server: GQLDevServer, serverTask: Task<Void, any Error>, client: GQLServer,
        queries: GQLQuery, cache: GQLCache
    ) {
        self.directory = directory
        self.server = server
        self.serverTask = serverTask
        self.client = client
        self.queries = queries
        self.cache = cache
    }

    /// Starts the server with notes `1`…`notes` (title `Note i`, n = i) and opens the cache, its configuration
    /// edited by `edit`.
    static func make(
        notes: Int = 3, _ edit: (inout GQLCache.Configuration) -> Void = { _ in }
    ) async throws -> CacheFixture {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        var serverConfiguration = GQLDevServer.Configuration()
        serverConfiguration.port = 0
        serverConfiguration.schema = cacheTestSchema
        // Loops of its own, so that tests running in parallel cannot hold back its timers and answers.
        serverConfiguration.eventLoopThreads = 2
        let server = try GQLDevServer(
            configuration: serverConfiguration, database: GQLDatabase(path: directory.path("server.sqlite")))
        let task = Task { try await server.run() }
        let endpoints = try await server.endpoints()
        var clientConfiguration = GQLServer.Configuration()
        clientConfiguration.timeout = .seconds(10)
        let client = GQLServer(HTTP: endpoints.http, configuration: clientConfiguration)
        let queries = try cacheTestQueries()
        var configuration = GQLCache.Configuration()
        configuration.queries = queries
        edit(&configuration)
        let cache = try GQLCache(path: directory.path("cache.sqlite"), configuration: configuration)
        let fixture = CacheFixture(
            directory: directory, server: server, serverTask: task, client: client, queries: queries, cache: cache)
        for i in 1...max(notes, 1) where notes > 0 {
            let created = try await client.mutation(
                try queries["CreateNote"],
                ["input": ["id": .string("\(i)"), "title": .string("Note \(i)"), "n": .int(Int64(i))] as GQLValue])
            #expect(created.errors.isEmpty)
        }
        return fixture
    }

    /// Changes a note on the server behind the cache's back.
    func retitle(_ id: String, _ title: String) async throws {
        let result = try await client.mutation(try queries["UpdateNote"], ["input": ["id": id, "title": title]])
        #expect(result.errors.isEmpty)
    }

    /// Stops the server: requests fail to connect from now on.
    func stopServer() async {
        await server.shutdown()
        _ = try? await serverTask.value
    }

    func finish() async {
        await stopServer()
        try? await client.shutdown()
        try? await cache.database.close()
        directory.cleanup()
    }
}

/// An in-memory cache with the test registry.
func memoryCache(_ edit: (inout GQLCache.Configuration) -> Void = { _ in }) throws -> GQLCache {
    var configuration = GQLCache.Configuration()
    configuration.queries = try cacheTestQueries()
    edit(&configuration)
    return try GQLCache(inMemory: true, configuration: configuration)
}

/// A clock the tests move by hand, for expiry and read times.
final class TestClock: Sendable {
    private let time = GQLLocked(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { time.withLock { $0 } }

    func advance(seconds: Double) { time.withLock { $0 += seconds } }

    /// The closure for ``GQLCache/Configuration/clock``.
    var clock: @Sendable () -> Date { { [time] in time.withLock { $0 } } }
}
