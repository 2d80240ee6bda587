import GQLCore
import GQLStore
import NIOPosix
import Synchronization
import Testing

@testable import GQLDevServer

/// The real engine, noting for each request whether it ran on a NIO event loop thread.
final class LoopRecordingEngine: DevExecutor {
    let engine: DevEngine
    private let onLoop = Mutex<[Bool]>([])

    init(_ engine: DevEngine) {
        self.engine = engine
    }

    /// For each executed request, in order: whether it ran on an event loop.
    var ranOnEventLoop: [Bool] { onLoop.withLock { $0 } }

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
        onLoop.withLock { $0.append(isLoop) }
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
}
