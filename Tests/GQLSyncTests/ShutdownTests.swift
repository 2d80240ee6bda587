import Foundation
import GQLCore
import GQLNet
import Testing

@testable import GQLSync

/// What a shutdown leaves in the outbox.
@Suite(.timeLimit(.minutes(2))) struct ShutdownTests {
    @Test func itemsSentBeforeAShutdownAreNotSentAgain() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let first = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        let sent = watchStatus(first, until: { $0.sentCount == 5 })
        for n in 1...5 { try await first.steady("CreateNote", ["n": n]) }
        _ = await sent.value
        // No drain: the loop may not have claimed again since the last answer.
        try await first.shutdown()

        let second = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        #expect(second.pendingCount == 0)
        try await second.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...5))
        await fixture.finish(second)
    }
}
