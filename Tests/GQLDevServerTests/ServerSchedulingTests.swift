import GQLCore
import GQLStore
import NIOPosix
import Synchronization
import Testing

@testable import GQLDevServer

/// The real engine, noting for each request whether it ran on a NIO event loop thread, and whether that loop is
/// one of NIO's shared ones (`MultiThreadedEventLoopGroup.singleton`).
final class LoopRecordingEngine: DevExecutor {
    let engine: DevEngine
    private let onLoop = Mutex<[(loop: Bool, shared: Bool)]>([])

    init(_ engine: DevEngine) {
        self.engine = engine
    }

    /// For each executed request, in order: whether it ran on an event loop.
    var ranOnEventLoop: [Bool] { onLoop.withLock { $0.map(\.loop) } }

    /// For each executed request, in order: whether it ran on one of NIO's shared event loops.
    var ranOnSharedLoop: [Bool] { onLoop.withLock { $0.map(\.shared) } }

    var database: GQLDatabase { engine.database }
    var schemaSDL: String { engine.schemaSDL }
    var limits: GQLDevServer.Limits { engine.limits }

    func prepare(_ request: DevEngine.Request) -> Result<DevEngine.Prepared, DevEngine.Refusal> {
        engine.prepare(request)
    }

    func execute(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle, budget: ResponseBudget) async
        -> DevEngine.Response
    {
        let isLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
        let isShared = MultiThreadedEventLoopGroup.singleton.makeIterator().contains { $0.inEventLoop }
        onLoop.withLock { $0.append((isLoop, isShared)) }
        return await engine.execute(prepared, style: style, budget: budget)
    }

    func subscribe(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle) async -> DevEngine.Subscription {
        await engine.subscribe(prepared, style: style)
    }
}

@Suite("GQLDevServer's scheduling", .timeLimit(.minutes(1)))
struct ServerSchedulingTests {
    @Test("a connection's requests run on its own event loop, with no hop to the concurrency pool and back")
    func requestsRunOnTheConnectionsEventLoop() async throws {
        let fixture = try EngineFixture()
        let engine = LoopRecordingEngine(fixture.engine)
        try await withDevServer(engine: engine) { _, endpoints in
            let created = try await post(endpoints.http, ObjectsAPI.createRequest("loop", "x"))
            #expect(created.json == ObjectsAPI.created("loop", "x"))
            let read = try await post(endpoints.http, ["query": .string(ObjectsAPI.get), "variables": ["id": "loop"]])
            #expect(read.json == ["data": ["getObjects": ObjectsAPI.object("loop", "x")]])
        }
        #expect(engine.ranOnEventLoop == [true, true])
    }

    @Test(
        "eventLoopThreads runs the server on loops of its own, none of NIO's shared ones; nil on the shared ones",
        arguments: [1, nil])
    func ownEventLoops(threads: Int?) async throws {
        let fixture = try EngineFixture()
        let engine = LoopRecordingEngine(fixture.engine)
        var configuration = GQLDevServer.Configuration()
        configuration.eventLoopThreads = threads
        try await withDevServer(configuration, engine: engine, ownLoops: false) { _, endpoints in
            for id in ["a", "b", "c"] {
                let created = try await post(endpoints.http, ObjectsAPI.createRequest(id, "x"))
                #expect(created.json == ObjectsAPI.created(id, "x"))
            }
        }
        #expect(engine.ranOnEventLoop == [true, true, true])
        #expect(engine.ranOnSharedLoop == Array(repeating: threads == nil, count: 3))
    }

    @Test("eventLoopThreads under 1 is refused when the server is made")
    func noThreads() {
        var configuration = GQLDevServer.Configuration()
        configuration.eventLoopThreads = 0
        #expect(throws: GQLError.self) { try GQLDevServer(configuration: configuration) }
    }
}
