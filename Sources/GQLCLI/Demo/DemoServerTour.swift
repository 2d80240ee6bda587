import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import Logging

/// The last step of `gql-cli demo`: GQLDevServer in-process on a free port, driven by the GQLNet client,
/// GQLServer: an AppSync client (API key) opens the real-time WebSocket and starts two subscriptions, creates
/// and updates an object over HTTP, lists objects, then prints what the subscriptions heard; an HTTP client
/// without the key is refused; the server stops gracefully.
///
/// Deterministic apart from the port: fixed data, events printed in a fixed order once both arrived.
struct DemoServerTour: DemoStep {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let apiKey = "da2-demo"
    static let fields = "objectId text number _version"
    static let subscriptions = ["onCreateObjects", "onUpdateObjects"]
    private static let timeout: Duration = .seconds(20)

    func run() async throws {
        heading("8. The development server (gql-cli serve)")
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.apiKey = Self.apiKey
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, logger: quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            do {
                try await withThrowingTaskGroup(of: Bool.self) { race in
                    race.addTask {
                        try await tour(server)
                        return true
                    }
                    race.addTask {
                        try await Task.sleep(for: Self.timeout)
                        return false
                    }
                    let finished = try await race.next() ?? false
                    race.cancelAll()
                    if !finished { throw Failure(description: "the server tour took more than \(Self.timeout)") }
                }
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
            try await group.waitForAll()
        }
        say("server.shutdown() -> stopped")
    }

    private func tour(_ devServer: GQLDevServer) async throws {
        let endpoints = try await devServer.endpoints()
        say("GQLDevServer listening on \(endpoints.http), API key \(Self.apiKey)")

        let client = GQLServer(AppSync: endpoints.http, key: Self.apiKey, realtime: endpoints.webSocket)
        let heard = Heard()
        var watchers: [Task<Void, Never>] = []
        do {
            try await client.connect()
            for field in Self.subscriptions {
                let events = client.subscription("subscription { \(field) { \(Self.fields) } }")
                watchers.append(Task { await heard.record(field, from: events) })
            }
            try await waitUntilLive(client, heard)
            say("GQLServer(AppSync:key:realtime:) connect(), subscription(onCreateObjects, onUpdateObjects) -> live")
            try await exchange(client, heard)
        } catch {
            for watcher in watchers { watcher.cancel() }
            try? await client.shutdown()
            throw error
        }
        for watcher in watchers { watcher.cancel() }
        try await client.shutdown()

        let anonymous = GQLServer(HTTP: endpoints.http)
        let status: Int
        do {
            _ = try await anonymous.query("{ listObjects { items { objectId } } }")
            status = 200
        } catch let error as GQLError where error.code == .http {
            status = error.httpStatus ?? 0
        } catch {
            try? await anonymous.shutdown()
            throw error
        }
        try await anonymous.shutdown()
        say("HTTP listObjects without x-api-key -> \(status)")
    }

    /// The mutations and the query, then the events the subscriptions heard for them.
    private func exchange(_ client: GQLServer, _ heard: Heard) async throws {
        let createInput: GQLValue = ["objectId": "demo-1", "text": "Hello", "number": 1]
        let created = try await client.mutation(
            GQLValue.self, "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { \(Self.fields) } }",
            ["input": createInput], at: "createObjects")
        say("HTTP createObjects(demo-1, \"Hello\", 1)        -> \(Self.summary(created))")
        // Wait for the create's event before updating, so the tour prints its lines in the same order on every
        // run.
        var create: GQLValue?
        while create == nil {
            create = try heard.item("onCreateObjects", objectId: "demo-1")
            if create == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let updateInput: GQLValue = ["objectId": "demo-1", "text": "Hello again", "number": 2]
        let updated = try await client.mutation(
            GQLValue.self, "mutation ($input: UpdateObjectsInput!) { updateObjects(input: $input) { \(Self.fields) } }",
            ["input": updateInput], at: "updateObjects")
        say("HTTP updateObjects(demo-1, \"Hello again\", 2) -> \(Self.summary(updated))")
        let filter: GQLValue = ["text": ["beginsWith": "Hello"]]
        let listed = try await client.query(
            GQLValue.self,
            "query ($filter: ModelObjectsFilterInput) { listObjects(filter: $filter) { items { \(Self.fields) } } }",
            ["filter": filter], at: "listObjects")
        let items = (listed["items"]?.arrayValue ?? []).map(Self.summary).joined(separator: "; ")
        say("HTTP listObjects(filter: text beginsWith \"Hello\") -> \(items)")

        var update: GQLValue?
        while update == nil {
            update = try heard.item("onUpdateObjects", objectId: "demo-1")
            if update == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        say("subscription heard: onCreateObjects \(Self.summary(create))")
        say("                    onUpdateObjects \(Self.summary(update))")
    }

    /// Makes sure both subscriptions are registered before the demo's own writes: GQLServer does not report a
    /// subscription's `start_ack`, so probe objects (`probe-…`, never printed) are created and updated until each
    /// subscription has heard one.
    private func waitUntilLive(_ client: GQLServer, _ heard: Heard) async throws {
        let input: GQLValue = ["objectId": "probe-0", "text": "probe"]
        _ = try await client.mutation(
            GQLValue.self, "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
            ["input": input], at: "createObjects")
        var round = 0
        while true {
            let createLive = try heard.item("onCreateObjects", objectId: "probe-", prefix: true) != nil
            let updateLive = try heard.item("onUpdateObjects", objectId: "probe-", prefix: true) != nil
            if createLive && updateLive { return }
            // Every 100 ms, another probe write for each subscription still silent.
            if round % 10 == 0 {
                if !createLive {
                    let probe: GQLValue = ["objectId": .string("probe-\(round / 10 + 1)"), "text": "probe"]
                    _ = try await client.mutation(
                        GQLValue.self,
                        "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
                        ["input": probe], at: "createObjects")
                }
                if !updateLive {
                    _ = try await client.mutation(
                        GQLValue.self,
                        "mutation ($input: UpdateObjectsInput!) { updateObjects(input: $input) { objectId } }",
                        ["input": input], at: "updateObjects")
                }
            }
            round += 1
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What the subscriptions delivered, by subscription field; or why one failed.
    private final class Heard: Sendable {
        private struct State {
            var items: [String: [GQLValue]] = [:]
            var failure: String?
        }

        private let state = GQLLocked(State())

        /// Records the events of one subscription until it ends or its task is cancelled.
        func record(_ field: String, from events: GQLServer.Subscription) async {
            do {
                for try await event in events {
                    state.withLock { state in
                        if let error = event.errors.first {
                            state.failure = "\(field) delivered an error: \(error)"
                        } else if let item = event.data?[field] {
                            state.items[field, default: []].append(item)
                        }
                    }
                }
            } catch {
                if !Task.isCancelled { state.withLock { $0.failure = "\(field) failed: \(error)" } }
            }
        }

        /// The first item `field` delivered whose `objectId` is (or starts with) `objectId`.
        func item(_ field: String, objectId: String, prefix: Bool = false) throws -> GQLValue? {
            let (items, failure) = state.withLock { ($0.items[field], $0.failure) }
            if let failure { throw Failure(description: "the subscription \(failure)") }
            return items?.first { item in
                guard let id = item["objectId"]?.stringValue else { return false }
                return prefix ? id.hasPrefix(objectId) : id == objectId
            }
        }
    }

    // MARK: Output

    private static func summary(_ item: GQLValue?) -> String {
        guard let item, let key = item["objectId"]?.stringValue else { return "nothing" }
        let text = item["text"]?.stringValue.map { "\"\($0)\"" } ?? "null"
        let number = item["number"]?.intValue.map(String.init) ?? "null"
        let version = item["_version"]?.intValue.map(String.init) ?? "?"
        return "\(key) \(text) \(number) (_version \(version))"
    }
}
