import Foundation
import GQLNet
import Testing

@testable import GQLDevServer

/// The event loop threads of each test's server: loops of its own, so that tests running in parallel cannot hold
/// back its timers and answers (two threads, as many as NIO's shared group has on CI's two cores).
let testServerLoopThreads = 2

/// Runs `body` with the URL of a `GQLDevServer` on a free port (in-memory database), then stops the server.
func withDevServer<T: Sendable>(
    _ configuration: GQLDevServer.Configuration = .init(), _ body: (String) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    configuration.databasePath = ":memory:"
    configuration.eventLoopThreads = testServerLoopThreads
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

/// A `GQLDevServer` running in a background task, for tests that stop and restart servers on the same port.
struct RunningDevServer {
    let server: GQLDevServer
    let task: Task<Void, any Error>
    let endpoints: GQLDevServer.Endpoints

    /// Starts a server; `port` 0 picks a free one.
    static func start(_ configuration: GQLDevServer.Configuration = .init(), port: Int = 0) async throws
        -> RunningDevServer
    {
        var configuration = configuration
        configuration.port = port
        if configuration.databasePath == nil { configuration.databasePath = ":memory:" }
        configuration.eventLoopThreads = testServerLoopThreads
        let server = try GQLDevServer(configuration: configuration)
        let task = Task { try await server.run() }
        do {
            return RunningDevServer(server: server, task: task, endpoints: try await server.endpoints())
        } catch {
            task.cancel()
            throw error
        }
    }

    var port: Int { Int(endpoints.http.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0 }

    /// Waits (bounded, 10 s) until the server serves `count` subscriptions, so a change committed now reaches
    /// them. Whether it happened.
    func waitForSubscriptions(_ count: Int) async -> Bool {
        guard let engine = server.engine as? DevEngine else { return false }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if engine.subscriptionCount == count { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return engine.subscriptionCount == count
    }

    /// How many subscriptions the server serves now.
    var subscriptionCount: Int { (server.engine as? DevEngine)?.subscriptionCount ?? -1 }

    /// Stops the server (sockets get 1001) and waits for it to finish.
    func stop() async {
        await server.shutdown()
        _ = try? await task.value
    }
}

/// Runs `body` with a running dev server, stopping it afterwards, also when `body` throws.
func withRunningDevServer<T: Sendable>(
    _ configuration: GQLDevServer.Configuration = .init(), _ body: (RunningDevServer) async throws -> T
) async throws -> T {
    let running = try await RunningDevServer.start(configuration)
    do {
        let result = try await body(running)
        await running.stop()
        return result
    } catch {
        await running.stop()
        throw error
    }
}

/// Collects the first `count` elements of a sequence in a child task, so the caller can act while it waits.
func firstElements<S: AsyncSequence & Sendable>(_ count: Int, of sequence: S) -> Task<[S.Element], any Error>
where S.Element: Sendable {
    Task {
        var elements: [S.Element] = []
        guard count > 0 else { return elements }
        for try await element in sequence {
            elements.append(element)
            if elements.count == count { break }
        }
        return elements
    }
}

/// Waits until `states` reports a state matching `predicate`, and returns every state seen until then.
func waitForState(
    _ states: GQLServer.ConnectionStates, _ predicate: @escaping @Sendable (GQLServer.ConnectionState) -> Bool
) async -> [GQLServer.ConnectionState] {
    var seen: [GQLServer.ConnectionState] = []
    for await state in states {
        seen.append(state)
        if predicate(state) { break }
    }
    return seen
}

/// The `GQLError` `body` throws, or `nil` (recording an issue for any other error).
func gqlError(_ body: () throws -> Void) -> GQLError? {
    do {
        try body()
        return nil
    } catch let error as GQLError {
        return error
    } catch {
        Issue.record("expected a GQLError, got \(error)")
        return nil
    }
}
