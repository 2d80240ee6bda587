import Foundation
import GQLCore
import Synchronization
import Testing

@testable import GQLDevServer

/// The injected clock (`Configuration.clock`) is the only time the server writes or reports, so delta-sync tests
/// control it.
@Suite("Engine clock")
struct EngineClockTests {
    @Test func everyStampComesFromTheInjectedClock() async throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_000))
        let fixture = try EngineFixture(clock: { now.withLock { $0 } })
        let created = try await fixture.createObject(["objectId": "a", "text": "x"])
        #expect(created["_lastChangedAt"] == 1_000_000)
        #expect(created["createdAt"] == "1970-01-01T00:16:40.000Z" && created["updatedAt"] == created["createdAt"])
        now.withLock { $0 = Date(timeIntervalSince1970: 2_000) }
        let updated = try await fixture.data(
            #"mutation { updateObjects(input: {objectId: "a", text: "y"}) { _lastChangedAt updatedAt createdAt } }"#)
        #expect(updated["updateObjects"]?["_lastChangedAt"] == 2_000_000)
        #expect(updated["updateObjects"]?["updatedAt"] == "1970-01-01T00:33:20.000Z")
        #expect(updated["updateObjects"]?["createdAt"] == "1970-01-01T00:16:40.000Z")
        let sync = try await fixture.data("{ syncObjects(lastSync: 1500000) { items { objectId } startedAt } }")
        #expect(sync["syncObjects"]?["startedAt"] == 2_000_000)
        #expect(sync["syncObjects"]?["items"] == [["objectId": "a"]])
    }
}
