import Foundation
import GQLCore
import GQLDevServer
import GQLTestSupport
import Testing

@testable import GQLNet

/// `subscriptionsStarted()`: it returns only once the server registered the subscriptions sent before it, over
/// every protocol (AppSync by its `start_ack`s, the others by a query answered on the same socket after them). The
/// dev server holds the subscription's registration until the test opens the gate.
@Suite("GQLServer.subscriptionsStarted")
struct SubscriptionsStartedTests {
    static let onCreate = "subscription OnCreate { onCreateObjects { objectId text } }"

    @Test(arguments: GQLServer.WebSocketProtocol.allCases)
    func returnsOnlyOnceTheServerRegisteredTheSubscription(_ kind: GQLServer.WebSocketProtocol) async throws {
        let gate = HeldGate(holding: "OnCreate")
        var configuration = GQLDevServer.Configuration()
        configuration.beforeSubscriptionStarts = { await gate.pass($0) }
        try await withRunningDevServer(configuration) { running in
            try await withClient(GQLServerWebSocketTests.client(running, kind)) { server in
                let events = firstElements(1, of: server.subscription(Self.onCreate))
                await gate.held()  // the subscribe reached the server, which holds its registration
                let started = Task {
                    try await server.subscriptionsStarted()
                    return running.subscriptionCount
                }
                gate.open()
                // Counted as it returned: never before the registration.
                #expect(try await started.value == 1)
                // So a change made now reaches the subscription, with no polling of the server.
                let made = try await server.mutation(
                    GQLServerWebSocketTests.create, ["input": ["objectId": "s1", "text": "after"]])
                #expect(made.errors.isEmpty)
                #expect(try await events.value.first?.data?["onCreateObjects"]?["objectId"] == "s1")
            }
        }
    }
}
