import Foundation
import GQLCore
import GQLDevServer
import Testing

@testable import GQLNet

/// A caller that lags behind one operation's results must not starve the other operations sharing its socket, and
/// what waits for it stays bounded.
@Suite("A lagging caller and the other operations on its socket", .timeLimit(.minutes(2)))
struct LaggingCallerTests {
    typealias W = GQLServerWebSocketTests

    /// Two subscriptions on one socket; the caller waits on the second before it reads the first, which fills
    /// its buffer past the high watermark first (the shape of `zip(a, b)`). With reading paused until the first is
    /// drained, the second's event would never be read. The pause ends after `maximumSharedPause` and nothing of
    /// the first is lost.
    @Test func anotherSubscriptionIsReadWhileTheFirstLags() async throws {
        try await withRunningDevServer { running in
            try await withClient(W.client(running, .graphqlTransportWS)) { server in
                let filtered = """
                    subscription($text: String) { onCreateObjects(filter: {text: {eq: $text}}) { objectId } }
                    """
                var everything = server.subscription(W.onCreate).makeAsyncIterator()  // started, not read yet
                let blue = firstElements(1, of: server.subscription(filtered, ["text": "blue"]))
                try #require(await running.waitForSubscriptions(2))
                let reds = SocketResults.highWatermark * 2
                for n in 0..<reds {
                    _ = try await server.mutation(W.create, ["input": ["objectId": "red-\(n)", "text": "red"]])
                }
                _ = try await server.mutation(W.create, ["input": ["objectId": "blue-0", "text": "blue"]])
                // Waits for ever without the bound; 2 s pause, 30 s for a loaded machine.
                let watchdog = Task {
                    try await Task.sleep(for: .seconds(30))
                    blue.cancel()
                }
                defer { watchdog.cancel() }
                let got = try await blue.value
                #expect(got.map { $0.data?["onCreateObjects"]?["objectId"] } == ["blue-0"])
                var ids: [GQLValue?] = []
                while ids.count < reds + 1, let event = try await everything.next() {
                    ids.append(event.data?["onCreateObjects"]?["objectId"])
                }
                let expected = (0..<reds).map { GQLValue.string("red-\($0)") } + [GQLValue.string("blue-0")]
                #expect(ids == expected.map { Optional($0) })
            }
        }
    }

    /// Once reading went on without the caller, its results may wait up to the hard limit: then it gets those,
    /// then `.responseTooLarge`, and the connection is told to stop the operation (once).
    @Test func resultsPastTheHardLimitEndTheOperation() async throws {
        let stops = GQLLocked(0)
        let lags = GQLLocked<[Bool]>([])
        let results = SocketResults(
            onLagChange: { lagging in lags.withLock { $0.append(lagging) } },
            onTermination: { stops.withLock { $0 += 1 } })
        for n in 0..<(SocketResults.hardLimit + 10) { results.yield(GQLResult(data: ["n": .int(Int64(n))])) }
        #expect(stops.withLock { $0 } == 1)
        #expect(lags.withLock { $0 } == [true, false])
        var received = 0
        let error = await #expect(throws: GQLError.self) {
            while let result = try await results.next() {
                #expect(result.data?["n"] == .int(Int64(received)))
                received += 1
            }
        }
        #expect(received == SocketResults.hardLimit)
        #expect(error?.code == .responseTooLarge)
        results.terminate()
        #expect(stops.withLock { $0 } == 1)
    }
}
