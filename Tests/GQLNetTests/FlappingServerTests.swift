import Foundation
import GQLDevServer
import Testing

@testable import GQLNet

/// A server that acknowledges every connection and drops it soon after (GQLDevServer's `dropWebSocketsAfter`
/// fault): the subscription lives on, whatever `maximumAttempts` says, because every reconnect succeeds.
@Suite("GQLServer against a flapping server", .timeLimit(.minutes(2)))
struct FlappingServerTests {
    static let create = "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let onCreate = "subscription { onCreateObjects { objectId text } }"

    @Test(arguments: [GQLServer.WebSocketProtocol.graphqlTransportWS, .graphqlWS])
    func aSubscriptionOutlivesEveryDrop(_ kind: GQLServer.WebSocketProtocol) async throws {
        var dev = GQLDevServer.Configuration()
        // The acknowledgement (and graphql-ws's first `ka`) and one event, then close 1011.
        dev.faults.dropWebSocketsAfter = kind == .graphqlWS ? 3 : 2
        try await withDevServer(dev) { http in
            var configuration = GQLServer.Configuration()
            // One failed attempt would end it; successful ones never count.
            configuration.reconnect = .init(
                initialDelay: .milliseconds(5), maximumDelay: .milliseconds(40), maximumAttempts: 1)
            let server = GQLServer(
                HTTP: http, WebSocket: GQLServer.webSocketURL(forHTTP: http), protocol: kind,
                configuration: configuration)
            try await withClient(server) { server in
                let states = Task {
                    var seen: [GQLServer.ConnectionState] = []
                    for await state in server.connectionStates {
                        seen.append(state)
                        if state == .disconnected, seen.contains(.connected) { break }
                    }
                    return seen
                }
                let done = GQLLocked(false)
                let events = Task {
                    var results: [GQLResult] = []
                    for try await result in server.subscription(Self.onCreate) {
                        results.append(result)
                        if results.count == 4 { break }
                    }
                    done.withLock { $0 = true }
                    return results
                }
                // Events published while the client is reconnecting are lost: publish until four arrived.
                var created: Set<String> = []
                while !done.withLock({ $0 }), created.count < 400 {
                    let id = "flap-\(created.count)"
                    _ = try await server.mutation(Self.create, ["input": ["objectId": id, "text": "x"]])
                    created.insert(id)
                    try await Task.sleep(for: .milliseconds(10))
                }
                let received = try await events.value
                let ids = received.compactMap { $0.data?["onCreateObjects"]?["objectId"]?.stringValue }
                #expect(ids.count == 4 && Set(ids).isSubset(of: created), "\(ids)")
                await server.disconnect()
                let seen = await states.value
                let reconnects = seen.filter { if case .reconnecting = $0 { true } else { false } }
                #expect(reconnects.count >= 3, "\(seen)")
                #expect(reconnects.allSatisfy { if case .reconnecting(1, _) = $0 { true } else { false } }, "\(seen)")
                #expect(!seen.contains { if case .failed = $0 { true } else { false } }, "\(seen)")
            }
        }
    }
}
