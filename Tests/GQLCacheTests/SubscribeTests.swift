import Foundation
import GQLCache
import Testing

/// `cache.subscribe`: each event is written into the cache and wakes the watchers of what it touched.
@Suite struct SubscribeTests {
    @Test func eventsAreStoredAndWakeWatchers() async throws {
        let fixture = try await CacheFixture.make()
        let endpoints = try await fixture.server.endpoints()
        let socket = GQLServer(HTTP: endpoints.http, WebSocket: endpoints.webSocket)
        var watch = fixture.cache.watch(socket, "GetNote", ["id": "1"]).makeAsyncIterator()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Note 1")
        let events = Task {
            var titles: [String] = []
            for try await event in fixture.cache.subscribe(socket, "subscription { onUpdateNote { id title n } }") {
                #expect(event.source == .network)
                titles.append(event.data?["onUpdateNote"]?["title"]?.stringValue ?? "")
                if titles.last == "Done" { break }
            }
            return titles
        }
        // The subscription is live once an event arrives: retitle until the watcher hears one (outcome, not
        // time, decides; each round waits for the watcher).
        let poker = Task {
            var round = 0
            while !Task.isCancelled {
                round += 1
                try await fixture.retitle("1", "Round \(round)")
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        var seen = try await watch.next()?.data?["getNote"]?["title"]?.stringValue
        #expect(seen?.hasPrefix("Round") == true)
        poker.cancel()
        _ = try? await poker.value
        try await fixture.retitle("1", "Done")
        while seen != "Done", let next = try await watch.next() {
            seen = next.data?["getNote"]?["title"]?.stringValue
        }
        #expect(seen == "Done")
        #expect(try await events.value.last == "Done")
        #expect(try fixture.cache.record("SUBSCRIPTION_ROOT")?["onUpdateNote"] == ["__ref": "Note:1"])
        // Not a subscription: an error at the first iteration.
        var wrong = fixture.cache.subscribe(socket, "GetNote", ["id": "1"]).makeAsyncIterator()
        await #expect(throws: GQLError.self) { try await wrong.next() }
        try await socket.shutdown()
        await fixture.finish()
    }
}
