import GQLDevServer
import GQLNet

/// Runs `body` with the URL of a `GQLDevServer` on a free port (in-memory database), then stops the server.
func withDevServer<T: Sendable>(
    _ configuration: GQLDevServer.Configuration = .init(), _ body: (String) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    configuration.databasePath = ":memory:"
    let server = try GQLDevServer(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        group.addTask { try await server.run() }
        do {
            let result = try await body(try await server.endpoints().http)
            await server.shutdown()
            try await group.waitForAll()
            return result
        } catch {
            await server.shutdown()
            group.cancelAll()
            throw error
        }
    }
}

/// Runs `body` with `server`, then shuts the server's HTTP client down, also when `body` throws.
func withClient<T>(_ server: GQLServer, _ body: (GQLServer) async throws -> T) async throws -> T {
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}
