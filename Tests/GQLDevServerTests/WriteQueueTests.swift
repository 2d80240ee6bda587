import Dispatch
import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLDevServer

/// Mutations queued while the writer is busy are committed several per transaction, each with its own answer.
@Suite("GQLDevServer commits queued mutations in groups", .timeLimit(.minutes(1)))
struct WriteQueueTests {
    /// A store over a fresh file, its queue, and a gate that holds the queue's worker inside a first mutation
    /// while the test queues the rest (so that they form one group).
    struct Setup {
        let fixture: EngineFixture
        let writes: WriteQueue
        let store: ModelStore
        let gate = Gate()

        init() async throws {
            fixture = try EngineFixture()
            writes = WriteQueue(database: fixture.db)
            let model = try #require(try ModelParser.parse(ModelParser.defaultSDL, maxNesting: 8).models.first)
            store = ModelStore(model: model, database: fixture.db, writes: writes)
            await writes.hold(gate)
        }

        func create(_ id: String, _ text: String) throws -> ModelStore.Mutation {
            try store.mutation(.create, ["objectId": .string(id), "text": .string(text)], condition: nil)
        }

        /// Queues `mutations` in order, releases the worker, and waits for every outcome (in queue order).
        func run(_ mutations: [ModelStore.Mutation]) async -> [Result<GQLValues, any Error>] {
            await withTaskGroup(of: (Int, Result<GQLValues, any Error>).self) { group in
                for (index, mutation) in mutations.enumerated() {
                    let (stream, continuation) = AsyncStream.makeStream(of: Result<GQLValues, any Error>.self)
                    writes.submit(mutation) {
                        continuation.yield($0)
                        continuation.finish()
                    }
                    group.addTask {
                        for await result in stream { return (index, result) }
                        return (index, .failure(GQLError(.cancelled, "no outcome")))
                    }
                }
                gate.release()
                var outcomes: [(Int, Result<GQLValues, any Error>)] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
    }

    @Test("a group commits in one transaction; a failed check fails only its own mutation and sees earlier ones")
    func groupWithFailedChecks() async throws {
        let setup = try await Setup()
        let store = setup.store
        let outcomes = await setup.run([
            try setup.create("a", "one"),
            try setup.create("b", "two"),
            try setup.create("a", "again"),  // exists, created earlier in the same group
            try store.mutation(.update, ["objectId": "b", "text": "deux", "_version": 1], condition: nil),
            try store.mutation(.update, ["objectId": "b", "text": "stale", "_version": 1], condition: nil),
            try store.mutation(.delete, ["objectId": "zz"], condition: nil),  // missing
            try setup.create("c", "three"),
        ])
        #expect(outcomes.count == 7)
        #expect((try? outcomes[0].get())?["objectId"] == "a")
        #expect((try? outcomes[1].get())?["text"] == "two")
        #expect(throws: ResolverError.self) { try outcomes[2].get() }
        #expect((try? outcomes[3].get())?["_version"] == 2)
        #expect(throws: ResolverError.self) { try outcomes[4].get() }
        #expect(throws: ResolverError.self) { try outcomes[5].get() }
        #expect((try? outcomes[6].get())?["objectId"] == "c")
        // The worker's first transaction held the gate; the seven queued behind it committed together.
        #expect(setup.writes.transactions == 2)
        #expect(try store.get("a")?["text"] == "one")
        #expect(try store.get("b")?["text"] == "deux")
        #expect(try store.get("b")?["_version"] == 2)
        #expect(try store.get("c")?["text"] == "three")
        #expect(try setup.fixture.db.fetchAll(sql: "SELECT objectId FROM Objects", GQLArguments()).count == 3)
    }

    @Test("a statement SQLite refuses rolls its group back, and each of the group then commits on its own")
    func groupWithFailedStatement() async throws {
        let setup = try await Setup()
        let outcomes = await setup.run([
            try setup.create("a", "one"),
            { tx in
                _ = try tx.execute("INSERT INTO NoSuchTable VALUES (1)")
                return [:]
            },
            try setup.create("b", "two"),
        ])
        #expect((try? outcomes[0].get())?["objectId"] == "a")
        #expect(throws: GQLError.self) { try outcomes[1].get() }
        #expect((try? outcomes[2].get())?["objectId"] == "b")
        // The gate's transaction, then a and b alone (the group and the failing one committed nothing).
        #expect(setup.writes.transactions == 3)
        #expect(
            try setup.fixture.db.fetchAll(sql: "SELECT objectId FROM Objects ORDER BY objectId", GQLArguments())
                .map { $0["objectId"] } == ["a", "b"])
    }

    @Test("an answer is handed out only after its group has committed: another connection already reads the row")
    func answersAfterCommit() async throws {
        let setup = try await Setup()
        let database = setup.fixture.db
        let store = setup.store
        let seen = GQLLocked<[Bool]>([])
        let mutations = try ["x", "y"].map { try setup.create($0, "after") }
        for (id, mutation) in zip(["x", "y"], mutations) {
            setup.writes.submit(mutation) { _ in
                // A reader connection sees only committed rows.
                let visible =
                    (try? database.read { tx in try tx.fetchAll(sql: "SELECT 1 FROM Objects WHERE objectId = ?", [id]) })?
                    .count == 1
                seen.withLock { $0.append(visible) }
            }
        }
        setup.gate.release()
        #expect(await waitUntil { seen.withLock { $0.count } == 2 })
        #expect(seen.withLock { $0 } == [true, true])
        #expect(try store.get("x") != nil)
    }

    @Test("a create on a table whose primary key is not the model's key (an older schema's) still refuses a taken key")
    func createWithoutKeyConstraint() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gqldevserver-oldkey-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try GQLDatabase(path: directory.appendingPathComponent("old.sqlite").path)
        try await db.execute(
            #"CREATE TABLE "Note" ("rowKey" INTEGER PRIMARY KEY, "noteId" TEXT NOT NULL, "text" TEXT)"#)
        let engine = try DevEngine(sdl: "type Note @model { noteId: ID! @primaryKey text: String }", database: db)
        let create = #"mutation($id: ID!) { createNote(input: {noteId: $id, text: "t"}) { noteId } }"#
        let first = await engine.execute(.init(query: create, variables: ["id": "n1"]), style: .standard).value
        #expect(first["data"]?["createNote"]?["noteId"] == "n1")
        let second = await engine.execute(.init(query: create, variables: ["id": "n1"]), style: .standard).value
        #expect(second["data"]?["createNote"] == .null)
        #expect(second["errors"]?[0]?["message"]?.stringValue?.contains("already exists") == true, "\(second)")
        #expect(try db.fetchAll(sql: "SELECT noteId FROM Note", GQLArguments()).count == 1)
    }

    @Test("concurrent callers of the async form each get their own answer, and every row is written once")
    func concurrentCallers() async throws {
        let fixture = try EngineFixture()
        let model = try #require(try ModelParser.parse(ModelParser.defaultSDL, maxNesting: 8).models.first)
        let writes = WriteQueue(database: fixture.db, maxGroup: 8)
        let store = ModelStore(model: model, database: fixture.db, writes: writes)
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for n in 0..<200 {
                let mutation = try store.mutation(.create, ["objectId": .string("k\(n % 150)")], condition: nil)
                group.addTask { (try? await store.commit(mutation))?["objectId"]?.stringValue }
            }
            var ids: [String] = []
            for try await id in group { if let id { ids.append(id) } }
            return ids
        }
        // 150 distinct keys: 150 creates succeed, the 50 repeats find their key taken.
        #expect(ids.count == 150)
        #expect(Set(ids).count == 150)
        #expect(try fixture.db.fetchAll(sql: "SELECT objectId FROM Objects", GQLArguments()).count == 150)
    }
}

/// A rendezvous with a thread that must block: it calls ``enter()`` and waits there until ``release()``; the test
/// learns it arrived with ``waitUntilEntered()``, which waits on a thread of its own, not on the test's.
final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    func enter() {
        entered.signal()
        released.wait()
    }

    func waitUntilEntered() async { await onThread { [entered] in entered.wait() } }

    func release() { released.signal() }
}

extension WriteQueue {
    /// Holds the worker inside a first mutation until `gate` is released, so that the mutations queued meanwhile
    /// form one group.
    func hold(_ gate: Gate) async {
        submit({ _ in
            gate.enter()
            return [:]
        }) { _ in }
        await gate.waitUntilEntered()
    }
}
