import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// A cache test's world against an independent server: Strawberry GraphQL at its defaults
/// (Tests/Interop/strawberry_cache_peer.py, with the Python of the .venv `make venv` makes) on 127.0.0.1, a client
/// of it over HTTP and its WebSocket, and a cache in a SQLite file.
final class StrawberryCacheWorld: Sendable {
    static let person = "query($id: ID!) { person(id: $id) { id name age } }"
    static let people = "query { people { id name } }"
    static let rename = "mutation($id: ID!, $name: String!) { rename(id: $id, name: $name) { id name } }"
    static let renamed = "subscription { renamed { id name } }"

    let peer: PythonPeer
    let directory: TemporaryDirectory
    let client: GQLServer
    let cache: GQLCache

    private init(peer: PythonPeer, directory: TemporaryDirectory, client: GQLServer, cache: GQLCache) {
        self.peer = peer
        self.directory = directory
        self.client = client
        self.cache = cache
    }

    /// Starts the peer and opens the cache, its configuration edited by `edit`.
    static func start(_ edit: (inout GQLCache.Configuration) -> Void = { _ in }) async throws -> StrawberryCacheWorld {
        let peer = try await PythonPeer.start("strawberry_cache_peer.py")
        let directory = try TemporaryDirectory(prefix: "gqlcache-strawberry")
        var clientConfiguration = GQLServer.Configuration()
        clientConfiguration.timeout = .seconds(10)
        let client = GQLServer(
            HTTP: peer.ready, WebSocket: peer.ready.replacingOccurrences(of: "http://", with: "ws://"),
            configuration: clientConfiguration)
        var configuration = GQLCache.Configuration()
        edit(&configuration)
        let cache = try GQLCache(path: directory.path("cache.sqlite"), configuration: configuration)
        return StrawberryCacheWorld(peer: peer, directory: directory, client: client, cache: cache)
    }

    /// Renames a person on the server behind the cache's back (the client's own request, not the cache's).
    func rename(_ id: String, _ name: String) async throws {
        let result = try await client.mutation(Self.rename, ["id": id, "name": name])
        #expect(result.errors.isEmpty, "\(result.errors)")
    }

    /// Waits until the peer counts `count` live `renamed` subscriptions (the outcome decides; the suite's time
    /// limit bounds it).
    func waitForListeners(_ count: Int) async throws {
        while try await client.query("query { listeners }").data?["listeners"]?.intValue != Int64(count) {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the server: requests fail to connect from now on.
    func stopServer() async { await peer.stop() }

    func finish() async {
        await peer.stop()
        try? await client.shutdown()
        try? await cache.database.close()
        directory.cleanup()
    }
}
