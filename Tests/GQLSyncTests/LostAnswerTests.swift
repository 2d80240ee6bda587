import Foundation
import GQLCore
import GQLNet
import Testing

@testable import GQLSync

/// Answers lost on the way back: the server ran the mutation, the client never heard. The engine sends the item
/// again with its idempotency key, and a server that honours the key (the dev server) answers from its record
/// instead of applying it twice.
@Suite(.timeLimit(.minutes(2))) struct LostAnswerTests {
    /// One item per request, and batches of 5 (while more items are queued between the batches: a retried
    /// batch must go again as the same items, under the same key, not as a larger batch).
    @Test(arguments: [1, 5])
    func lostAnswersAreNeitherAppliedTwiceNorReordered(batchSize: Int) async throws {
        let fixture = try await SyncFixture.make()
        let proxy = try AnswerDroppingProxy(target: fixture.server.port, dropEvery: 4)
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(10)
        let client = GQLServer(HTTP: proxy.url, configuration: configuration)
        let sync = try GQLSync(
            client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration {
                $0.backoff = GQLBackoff(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(40))
                $0.batchSize = batchSize
            })
        let total = 20 * batchSize + 20
        // Paced, so that batches often leave with room for more and items arrive while one is retried.
        for n in 1...total {
            try await sync.steady("CreateNote", ["n": n])
            if n % 2 == 0 { try await Task.sleep(for: .milliseconds(3)) }
        }
        try await sync.drain()

        #expect(proxy.dropped >= 4)
        // Each item once, in call order, though a quarter of the answers were lost.
        #expect(try fixture.server.appliedNumbers() == Array(1...total))
        // Every lost answer's item was sent again and answered from the server's record.
        #expect(fixture.server.idempotentReplays == proxy.dropped)
        #expect(try sync.failedItems().isEmpty)
        proxy.stop()
        try? await client.shutdown()
        await fixture.finish(sync)
    }
}
