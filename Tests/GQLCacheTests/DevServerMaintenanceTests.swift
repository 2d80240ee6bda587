import Foundation
import GQLCache
import Testing

/// `gc()` and the byte budget on the answers of `gql-cli serve`'s dev server (GarbageCollectionTests checks the
/// same on written answers, StrawberryFeatureTests on Strawberry's).
@Suite(.timeLimit(.minutes(2))) struct DevServerMaintenanceTests {
    @Test func gcOnTheServersAnswers() async throws {
        let fixture = try await CacheFixture.make(notes: 3)
        let cache = fixture.cache
        _ = try await cache.fetch(fixture.client, "ListNotes")
        _ = try await cache.fetch(fixture.client, "GetNote", ["id": "1"])
        _ = try await cache.mutate(fixture.client, "UpdateNote", ["input": ["id": "2", "title": "Edited"]])
        // What only the mutation's root holds goes; Note:2 stays, listed.
        #expect(try cache.gc() == GQLCache.GarbageCollection(removedRecords: 1, removedReferences: 0))
        #expect(try cache.statistics().types["Note"] == 3)
        // Evicted, Note:2 leaves a dangling reference in the list's items: they go, and Note:3, which only they
        // reached; `getNote(id: "1")` still reaches Note:1.
        try cache.evict(key: "Note:2")
        #expect(try cache.gc() == GQLCache.GarbageCollection(removedRecords: 1, removedReferences: 1))
        #expect(try cache.statistics().types["Note"] == 1)
        #expect(try cache.read("GetNote", ["id": "1"])["getNote"]?["title"] == "Note 1")
        await fixture.finish()
    }

    @Test func theByteBudgetOnTheServersAnswers() async throws {
        let clock = TestClock()
        let measure = try await CacheFixture.make(notes: 4)
        for id in 1...4 { _ = try await measure.cache.fetch(measure.client, "GetNote", ["id": "\(id)"]) }
        let budget = try measure.cache.statistics().bytes - 1
        await measure.finish()
        let fixture = try await CacheFixture.make(notes: 4) {
            $0.clock = clock.clock
            $0.maximumBytes = budget
        }
        let cache = fixture.cache
        for id in 1...3 {
            _ = try await cache.fetch(fixture.client, "GetNote", ["id": "\(id)"])
            clock.advance(seconds: 1)
        }
        _ = try cache.read("GetNote", ["id": "1"])  // Note:1 is now read more recently than Note:2
        clock.advance(seconds: 1)
        _ = try await cache.fetch(fixture.client, "GetNote", ["id": "4"])
        let keys = try cache.recordKeys()
        #expect(keys == ["Note:1", "Note:3", "Note:4", "QUERY_ROOT"], "\(keys)")
        #expect(try cache.statistics().bytes <= budget / 10 * 9)
        await fixture.finish()
    }
}
