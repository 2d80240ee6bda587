import Foundation
import GQLCache
import GQLNet
import GQLStore
import GQLSync
import Testing

@testable import GQLDevServer

/// Generate, compile and run: GQLCodegenPlugin generated this target's operations from schema.graphql (the dev
/// server's, as `gql-cli serve --print-schema` prints it) and Objects.graphql at build time; here they run against
/// an in-process GQLDevServer, subscription included.
@Suite(.timeLimit(.minutes(1))) struct PluginTests {
    func withDevServer(_ body: (GQLServer) async throws -> Void) async throws {
        try await withDevServerAndEngine { server, _ in try await body(server) }
    }

    /// ``withDevServer(_:)``, with the dev server itself (to see when it has registered a subscription).
    func withDevServerAndEngine(_ body: (GQLServer, GQLDevServer) async throws -> Void) async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.databasePath = ":memory:"
        configuration.eventLoopThreads = 1
        let devServer = try GQLDevServer(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await devServer.run() }
            let endpoint = try await devServer.endpoints().http
            let server = GQLServer(HTTP: endpoint, WebSocket: GQLServer.webSocketURL(forHTTP: endpoint))
            do {
                try await body(server, devServer)
            } catch {
                try? await server.shutdown()
                await devServer.shutdown()
                throw error
            }
            try await server.shutdown()
            await devServer.shutdown()
            try await group.waitForAll()
        }
    }

    /// A database file in a fresh folder, and the folder (for the caller to remove).
    func temporaryDatabase() throws -> (GQLDatabase, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try GQLDatabase(path: directory.appendingPathComponent("app.sqlite").path), directory)
    }

    @Test func queriesAndMutationsRoundTripThroughTheGeneratedTypes() async throws {
        try await withDevServer { server in
            let created = try await server.perform(
                CreateObjectMutation(input: .init(objectId: "o1", text: "hello", number: 7, boolean: .null)))
            #expect(created.createObjects?.objectFields.objectId == "o1")
            #expect(created.createObjects?.objectFields.boolean == nil)

            let fetched = try await server.fetch(GetObjectQuery(id: "o1"))
            #expect(fetched.getObjects?.objectFields.text == "hello" && fetched.getObjects?.objectFields.number == 7)

            // Absent fields are left alone, null ones cleared.
            let updated = try await server.perform(UpdateObjectMutation(input: .init(objectId: "o1", text: .null)))
            #expect(updated.updateObjects?.text == nil && updated.updateObjects?.number == 7)

            _ = try await server.perform(CreateObjectMutation(input: .init(objectId: "o2", number: 9)))
            let filter = ModelObjectsFilterInput(number: .value(ModelIntInput(gt: 8)))
            let listed = try await server.fetch(ListObjectsQuery(filter: filter, limit: 10))
            #expect(listed.listObjects?.items.compactMap { $0?.objectFields.objectId } == ["o2"])

            let deleted = try await server.perform(DeleteObjectMutation(id: "o1"))
            #expect(deleted.deleteObjects?.objectId == "o1")
        }
    }

    @Test func subscriptionsDeliverTypedEvents() async throws {
        try await withDevServer { server in
            var events = server.subscribe(OnCreateObjectSubscription()).makeAsyncIterator()
            // The subscription is acknowledged before the first mutation goes out (the dev server's
            // graphql-transport-ws starts it on `subscribe`); mutations are retried until an event arrives.
            let writer = Task {
                for index in 0..<50 {
                    _ = try? await server.perform(
                        CreateObjectMutation(input: .init(objectId: .value("s\(index)"), text: "event")))
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { writer.cancel() }
            let event = try await events.next()
            #expect(event?.onCreateObjects?.text == "event")
            #expect(event?.onCreateObjects?.objectId.hasPrefix("s") == true)
        }
    }

    @Test func syncQueuesAndTheCacheAnswersGeneratedOperations() async throws {
        try await withDevServer { server in
            let (database, directory) = try temporaryDatabase()
            defer { try? FileManager.default.removeItem(at: directory) }
            let sync = try GQLSync(server, database: database)
            try await sync.steady(CreateObjectMutation(input: .init(objectId: "q1", text: "queued")), key: "q1")
            try await sync.drain()
            try await sync.shutdown()

            let cache = try GQLCache(inMemory: true)
            let first = try await cache.fetch(server, GetObjectQuery(id: "q1"), policy: .networkOnly)
            #expect(first.data.getObjects?.objectFields.text == "queued" && first.source == .network)
            let second = try await cache.fetch(server, GetObjectQuery(id: "q1"), policy: .cacheOnly)
            #expect(second.data == first.data && second.source == .cache)
        }
    }

    /// The generated `Objects` model (codegen.json names it with its key): stored and read back with GQLStore, and
    /// filled from the server by GQLSync's pull and live sync, with no hand-written type.
    @Test func generatedModelsStoreAndSync() async throws {
        try await withDevServerAndEngine { server, devServer in
            let (database, directory) = try temporaryDatabase()
            defer { try? FileManager.default.removeItem(at: directory) }

            // Stored and read back: the fetch goes through the generated init(row:).
            let local = Objects(objectId: "local", text: "mine", number: 3, boolean: true)
            try local.insert(database)
            #expect(try Objects.fetchOne(database, key: "local") == local)
            #expect(try Objects.fetchAll(database, "number = ?", [3]).map(\.objectId) == ["local"])

            // Pulled: the server's rows land in the model's table.
            _ = try await server.perform(CreateObjectMutation(input: .init(objectId: "p1", text: "one", number: 1)))
            _ = try await server.perform(CreateObjectMutation(input: .init(objectId: "p2", text: "two", double: 2.5)))
            let queries = GQLQuery()
            try queries.load(
                SyncObjectsQuery.document + "\n" + OnUpdateObjectSubscription.document, sourceName: "generated")
            var configuration = GQLSync.Configuration()
            configuration.queries = queries
            let sync = try GQLSync(server, database: database, configuration: configuration)
            let report = try await sync.pull(Objects.self, query: "SyncObjects")
            #expect(report.written == 2)
            let pulled = try Objects.fetchOne(database, key: "p2")
            #expect(pulled?.text == "two" && pulled?.double == 2.5 && pulled?.number == nil && pulled?._version == 1)
            #expect(try Objects.fetchAll(database, order: "objectId").map(\.objectId) == ["local", "p1", "p2"])

            // Live: an update on the server reaches the row.
            let live = try sync.live(Objects.self, subscriptions: ["OnUpdateObject"], query: "SyncObjects")
            var events = live.events.makeAsyncIterator()
            while let event = await events.next() {
                if case .pulled = event { break }
            }
            // Live sync pulls only once the server has registered the subscription, so an update made now reaches
            // it: no waiting here.
            let engine = try #require(devServer.engine as? DevEngine)
            #expect(engine.subscriptionCount == 1)
            _ = try await server.perform(UpdateObjectMutation(input: .init(objectId: "p1", text: "changed")))
            while let event = await events.next() {
                if case .applied = event { break }
            }
            let updated = try Objects.fetchOne(database, key: "p1")
            #expect(updated?.text == "changed" && updated?.number == 1 && updated?._version == 2)
            await live.stop()
            try await sync.shutdown()
        }
    }
}
