import GQLCore
import Testing

@testable import GQLDevServer

@Suite("A socket's operations by the client's id")
struct OperationRegistryTests {
    @Test("ids are told apart by their bytes: é as U+00E9 and as e + U+0301 are two operations")
    func idsByBytes() async throws {
        let registry = OperationRegistry(limit: 10)
        let waiting = AsyncStream<Void>.makeStream()
        let operation: @Sendable () async -> Void = { for await _ in waiting.stream {} }
        #expect(registry.start("s\u{E9}", operation) == .started)
        #expect(registry.start("se\u{301}", operation) == .started)
        #expect(registry.start("s\u{E9}", operation) == .duplicate)
        #expect(registry.stop("se\u{301}"))
        #expect(registry.isRunning("s\u{E9}"))
        #expect(!registry.isRunning("se\u{301}"))
        registry.stopAll()
        waiting.continuation.finish()
    }
}
