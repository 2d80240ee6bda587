import Foundation
import GQLCache
import GQLStore
import Testing

/// Fetches, watchers, optimistic mutations and manual writes at once on one cache (what `make tsan` runs under the
/// thread sanitizer): every watcher ends on the last write, and the file holds what the memory layer holds.
@Suite(.timeLimit(.minutes(2))) struct ConcurrencyTests {
    static func note(_ id: Int, _ title: String) -> GQLValue {
        ["getNote": ["__typename": "Note", "id": .string("\(id)"), "title": .string(title), "n": .int(Int64(id))]]
    }

    @Test func concurrentFetchesWatchersMutationsAndWrites() async throws {
        let fixture = try await CacheFixture.make(notes: 4)
        let cache = fixture.cache
        let client = fixture.client
        for id in 1...4 { _ = try await cache.fetch(client, "GetNote", ["id": "\(id)"]) }
        // One watcher per note, each reading until it sees its note's final title. The traffic starts once each
        // has emitted its first answer: a watcher whose task started only after the last write would see the final
        // title alone (1 answer, not the 2 or more expected below).
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        let watchers = (1...4).map { id in
            Task {
                var seen = 0
                defer { if seen == 0 { starting.yield() } }  // a watch that fails at once holds nothing back
                for try await result in cache.watch(client, "GetNote", ["id": "\(id)"], policy: .cacheOnly) {
                    seen += 1
                    if seen == 1 { starting.yield() }
                    if result.data?["getNote"]?["title"] == .string("final \(id)") { return seen }
                }
                return seen
            }
        }
        var watching = started.makeAsyncIterator()
        for _ in 1...4 { _ = await watching.next() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 1...4 {
                group.addTask {
                    for round in 0..<10 {
                        _ = try await cache.fetch(client, "GetNote", ["id": "\(id)"], policy: .networkOnly)
                        try cache.write("GetNote", ["id": "\(id)"], data: Self.note(id, "write \(round)"))
                        _ = try cache.read("GetNote", ["id": "\(id % 4 + 1)"])
                    }
                }
                group.addTask {
                    for round in 0..<5 {
                        _ = try await cache.mutate(
                            client, "UpdateNote", ["input": ["id": "\(id)", "title": "server \(round)"]],
                            optimistic: ["updateNote": Self.note(id, "saving \(round)")["getNote"] ?? .null])
                        _ = try await cache.fetch(client, "ListNotes", policy: .networkOnly)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.optimisticLayerCount == 0)
        for id in 1...4 { try cache.write("GetNote", ["id": "\(id)"], data: Self.note(id, "final \(id)")) }
        for watcher in watchers { #expect(try await watcher.value >= 2) }
        // The memory layer and a reopened file agree.
        let reopened = try GQLCache(path: fixture.directory.path("cache.sqlite"), configuration: cache.configuration)
        for id in 1...4 {
            #expect(try cache.read("GetNote", ["id": "\(id)"]) == reopened.read("GetNote", ["id": "\(id)"]))
        }
        try await reopened.database.close()
        await fixture.finish()
    }
}
