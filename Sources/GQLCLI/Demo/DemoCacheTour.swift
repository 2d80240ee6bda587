import Foundation
import GQLCache
import GQLNet

/// The cache step of `gql-cli demo`: a screen's query answered by the server and kept as records, answered again
/// from them; a watcher that hears a mutation's answer change a record it read; and, with the server stopped, the
/// same screen still answered from the cache.
struct DemoCacheTour: DemoStep {
    /// The dev server's default `Objects` model, as a screen would list it.
    static let list = "query Notes { listObjects { items { objectId text } } }"
    static let create =
        "mutation Create($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let update =
        "mutation Update($input: UpdateObjectsInput!) { updateObjects(input: $input) { objectId text } }"

    /// Where the cache's file goes (a temporary file).
    let path: String

    func run() async throws {
        heading("11. A response cache for offline screens (GQLCache)")
        let (_, url, stop) = try await startServer()
        let client = GQLServer(HTTP: url)
        for (id, text) in [("demo-c1", "Milk"), ("demo-c2", "Train tickets")] {
            _ = try await client.mutation(Self.create, ["input": ["objectId": id, "text": text]])
        }
        let cache = try GQLCache(path: path)
        let first = try await cache.fetch(client, Self.list, policy: .cacheFirst)
        say("fetch(server, \"query Notes {…}\", policy: .cacheFirst) -> \(texts(first)) from the \(first.source)")
        let again = try await cache.fetch(client, Self.list, policy: .cacheFirst)
        let records = try cache.statistics().types["Objects"] ?? 0
        say("the same fetch again -> from the \(again.source), no request; the cache holds \(records) Objects records")

        var watcher = cache.watch(client, Self.list, policy: .cacheOnly).makeAsyncIterator()
        _ = try await watcher.next()
        _ = try await cache.mutate(client, Self.update, ["input": ["objectId": "demo-c1", "text": "Milk and eggs"]])
        if let changed = try await watcher.next() {
            say("mutate(…) changes Objects:demo-c1 -> the screen's watcher emits \(texts(changed))")
        }

        await stop()
        let offline = try await cache.fetch(client, Self.list, policy: .networkFirst)
        say("server stopped: fetch(…, policy: .networkFirst) -> \(texts(offline)) from the \(offline.source)")
        try await client.shutdown()
    }

    /// The listed texts, in order.
    private func texts(_ result: GQLCache.Result) -> String {
        let items = result.result.data?["listObjects"]?["items"]?.arrayValue ?? []
        return "[" + items.compactMap { $0["text"]?.stringValue }.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }
}
