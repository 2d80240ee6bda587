import Foundation
import GQLStore
import GQLSync

/// The sync step of `gql-cli demo`: changes made while the server is down wait in GQLSync's outbox and are
/// delivered, in call order, once it starts on the same port; then a delta pull brings a change made elsewhere.
struct DemoSyncTour: DemoStep {
    /// The app's copy of the dev server's default `Objects` model.
    struct Object: GQLObject {
        var objectId = ""
        var text: String?
        var number: Int?
        var _version: Int?
        static func primaryKey() -> String { "objectId" }
        static func tableName() -> String { "Objects" }
    }

    static let operations = """
        mutation CreateObjects($input: CreateObjectsInput!) { createObjects(input: $input) { objectId _version } }
        query SyncObjects($limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
          syncObjects(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
            items { objectId text number _version _deleted } nextToken startedAt
          }
        }
        """

    /// Where the app's database goes (a temporary file).
    let path: String

    func run() async throws {
        heading("10. Offline sync (GQLSync)")
        // A port of our own: the server is started once to learn it, then stopped: the app is offline.
        var first = try await startServer()
        let port = first.port
        await first.stop()
        let url = "http://127.0.0.1:\(port)/graphql"

        let queries = GQLQuery()
        try queries.load(Self.operations, sourceName: "demo")
        var configuration = GQLSync.Configuration()
        configuration.queries = queries
        configuration.inputArgument = "input"
        configuration.backoff = GQLBackoff(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200))
        let db = try GQLDatabase(path: path)
        let client = GQLServer(HTTP: url)
        let sync = try GQLSync(client, database: db, configuration: configuration)
        // Offline as soon as a status says so: the first status a subscriber gets is the current one, so a
        // failure that came before the subscription (the `.offline` event already sent) still ends the wait.
        let offline = Task {
            for await status in sync.status where !status.isOnline { return }
        }
        for (n, text) in ["Buy milk", "Call Ann", "Book train"].enumerated() {
            try await db.write { tx in
                var object = Object()
                object.objectId = "demo-s\(n + 1)"
                object.text = text
                try object.insert(tx)
                try sync.steady("CreateObjects", ["objectId": object.objectId, "text": text], object.objectId, in: tx)
            }
        }
        await offline.value
        say("server down: 3 local writes, each with sync.steady(…, in: tx) -> pending \(sync.pendingCount), offline")

        first = try await startServer(port: port)
        sync.resume()
        try await sync.drain()
        let created = try await client.query("{ listObjects { items { objectId } } }")
        let ids = created.data?["listObjects"]?["items"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? []
        say(
            "server started on the same port, drain() -> pending \(sync.pendingCount), server has \(ids.joined(separator: ", "))"
        )

        let other = GQLServer(HTTP: url)
        _ = try await other.mutation(
            "mutation { updateObjects(input: {objectId: \"demo-s2\", text: \"Call Ann at 5\"}) { objectId } }")
        try await other.shutdown()
        let report = try await sync.pull(Object.self, query: "SyncObjects")
        let pulled = try Object.fetchOne(db, key: "demo-s2")
        say(
            "another client edits demo-s2; pull(Object.self, query: \"SyncObjects\") -> \(report.kind.rawValue), "
                + "\(report.written) written: demo-s2 \"\(pulled?.text ?? "")\" (_version \(pulled?._version ?? 0))")
        try await sync.shutdown()
        try await client.shutdown()
        try await db.close()
        await first.stop()
    }
}
