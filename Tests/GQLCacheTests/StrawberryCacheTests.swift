import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// Every policy against an independent server, Strawberry GraphQL at its defaults (Tests/Interop/strawberry_peer.py,
/// with the Python of the .venv `make venv` makes), online and then with the server stopped.
@Suite(.timeLimit(.minutes(2))) struct StrawberryCacheTests {
    static let person = "query($id: ID!) { person(id: $id) { id name age tags } }"
    static let people = "query($min: Int) { people(minAge: $min) { id name } }"

    @Test func everyPolicyOnlineAndWithTheServerStopped() async throws {
        let peer = try await PythonPeer.start("strawberry_peer.py")
        let directory = try TemporaryDirectory(prefix: "gqlcache-strawberry")
        defer { directory.cleanup() }
        let client = GQLServer(HTTP: peer.ready)
        let cache = try GQLCache(path: directory.path("cache.sqlite"))
        func fetch(_ policy: GQLCache.Policy, id: String = "1") async throws -> GQLCache.Result {
            try await cache.fetch(client, Self.person, ["id": id], policy: policy)
        }
        let first = try await fetch(.networkOnly)
        #expect(first.source == .network && first.errors.isEmpty, "\(first.errors)")
        #expect(first.data?["person"]?["name"] == "Ada" && first.data?["person"]?["__typename"] == "Person")
        #expect(first.data?["person"]?["tags"] == ["math", "engines"])
        // Fields in the selection's order (the cache adds `__typename` first), from the network and from the cache.
        let order = ["__typename", "id", "name", "age", "tags"]
        #expect(first.data?["person"]?.objectValue?.keys == order)
        #expect(try await fetch(.cacheFirst).source == .cache)
        #expect(try await fetch(.cacheOnly).source == .cache)
        #expect(try await fetch(.networkFirst).source == .network)
        #expect(try await fetch(.cacheAndNetwork).source == .cache)
        // Another query's answer shares the records: Person:2 is now cached with its name.
        let listed = try await cache.fetch(client, Self.people, ["min": 70])
        #expect(listed.source == .network && listed.data?["people"]?.arrayValue?.count == 2)
        #expect(try cache.record("Person:2")?["name"] == "Grace")

        await peer.stop()
        for policy in [GQLCache.Policy.cacheFirst, .cacheOnly, .networkFirst, .cacheAndNetwork] {
            let offline = try await fetch(policy)
            #expect(offline.source == .cache && offline.data == first.data, "\(policy)")
            #expect(offline.data?["person"]?.objectValue?.keys == order, "\(policy)")
        }
        await #expect(throws: (any Error).self) { try await fetch(.networkOnly) }
        // Nothing cached for person 3: the network's failure, not a cached answer.
        let error = await #expect(throws: (any Error).self) { try await fetch(.cacheFirst, id: "3") }
        #expect((error as? GQLError)?.code != .cacheMiss)
        try await client.shutdown()
        try await cache.database.close()
    }
}
