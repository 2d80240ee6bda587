import Foundation
import GQLCore
import GQLNet
import Testing

@testable import GQLSync

/// Options the other suites leave at one setting: values sent as the mutation's own variables (the original
/// library's way, the default), and `resume()` cutting a long backoff short.
@Suite(.timeLimit(.minutes(1))) struct DeliveryOptionsTests {
    @Test func valuesAreTheMutationsVariablesByDefault() async throws {
        let fixture = try await SyncFixture.make()
        try fixture.queries.load(
            "mutation CreateN($n: Int) { createNote(input: {n: $n}) { id n } }", sourceName: "plain-variables")
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.inputArgument = nil })
        for n in [7, 8] { try await sync.steady("CreateN", ["n": n]) }
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [7, 8])
        await fixture.finish(sync)
    }

    /// The backoff after the first failure is an hour: only `resume()` can deliver the item within the test's
    /// time limit once the server is up.
    @Test func resumeRetriesAtOnceInsteadOfWaitingOutTheBackoff() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration {
                $0.backoff = GQLBackoff(initialDelay: .seconds(3600), maximumDelay: .seconds(3600))
            })
        let offline = watchStatus(sync, until: { !$0.isOnline })
        try await sync.steady("CreateNote", ["n": 1])
        _ = await offline.value
        try await fixture.server.start()
        sync.resume()
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1])
        await fixture.finish(sync)
    }
}
