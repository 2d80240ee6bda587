import Foundation
import Testing

@testable import GQLDevServer

/// A fresh database file in its own temporary directory with an engine over it, removed when the test ends.
final class EngineFixture: Sendable {
    let directory: URL
    let db: GQLDatabase
    let engine: DevEngine

    init(sdl: String? = nil, limits: GQLDevServer.Limits = .init(), clock: @escaping @Sendable () -> Date = Date.init)
        throws
    {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gqldevserver-engine-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        db = try GQLDatabase(path: directory.appendingPathComponent("engine.sqlite").path)
        engine = try DevEngine(sdl: sdl, database: db, limits: limits, clock: clock)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// The whole response of a query or mutation.
    func run(
        _ query: String, _ variables: GQLValues = [:], operationName: String? = nil,
        style: DevEngine.ErrorStyle = .standard
    ) async -> GQLValue {
        await engine.execute(.init(query: query, variables: variables, operationName: operationName), style: style)
            .value
    }

    /// The `data` of a response that must have no errors.
    func data(_ query: String, _ variables: GQLValues = [:], sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> GQLValue
    {
        let response = await run(query, variables)
        #expect(response["errors"] == nil, "unexpected errors: \(response)", sourceLocation: sourceLocation)
        return try #require(response["data"], "no data in \(response)", sourceLocation: sourceLocation)
    }

    /// Creates an `Objects` item through the API and returns it.
    @discardableResult
    func createObject(_ input: GQLValues) async throws -> GQLValue {
        let data = try await data(
            "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { \(Self.objectFields) } }",
            ["input": .object(input)])
        return try #require(data["createObjects"])
    }

    /// Every field of the default model.
    static let objectFields =
        "objectId text number double boolean createdAt updatedAt _version _deleted _lastChangedAt"

    /// A subscription stream, failing the test when the engine refuses it.
    func subscribe(_ query: String, _ variables: GQLValues = [:]) async throws -> DevEngine.Events {
        switch await engine.subscribe(.init(query: query, variables: variables)) {
        case .stream(let stream): return stream
        case .failed(let response):
            Issue.record("subscription refused: \(response)")
            throw GQLError(.invalidArgument, "subscription refused")
        }
    }

    /// Waits (bounded) until the database has `count` observers.
    func waitForObservers(_ count: Int, timeout: Duration = .seconds(60)) async -> Bool {
        await waitUntil(timeout: timeout) { self.db.observerCount == count }
    }

    /// Waits (bounded) until the engine has `count` subscriptions.
    func waitForSubscriptions(_ count: Int, timeout: Duration = .seconds(60)) async -> Bool {
        await waitUntil(timeout: timeout) { self.engine.subscriptionCount == count }
    }
}

/// Polls `condition` until it holds or `timeout` passes; whether it held.
func waitUntil(timeout: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// The first `count` events of `stream`, or fewer when `timeout` passes first.
func collect(_ stream: DevEngine.Events, count: Int, timeout: Duration = .seconds(60))
    async throws -> [GQLValue]
{
    try await withThrowingTaskGroup(of: [GQLValue]?.self) { group in
        group.addTask {
            var events: [GQLValue] = []
            for try await event in stream {
                events.append(event.value)
                if events.count == count { break }
            }
            return events
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        // The timer's nil cancels the collector, which then returns what it has.
        for try await result in group {
            group.cancelAll()
            if let events = result { return events }
        }
        return []
    }
}

extension GQLValue {
    /// The messages of a response's errors.
    var errorMessages: [String] {
        (self["errors"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue }
    }
}
