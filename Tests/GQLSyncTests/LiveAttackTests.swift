import Foundation
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Live sync against a graphql-transport-ws server whose events have every wrong shape, then end (the
/// `/hostile-subscriptions` scenario of Tests/Interop/websocket_peer.py): each bad event is a `.failed` event naming
/// what is wrong and leaves the store alone, the good ones around them are written, and a subscription the server
/// ends is reported.
@Suite(.timeLimit(.minutes(2))) struct LiveAttackTests {
    @Test func eventsOfTheWrongShapeFailOneByOneAndTheGoodOnesAreWritten() async throws {
        let peer = try await PythonPeer.start("websocket_peer.py")
        let directory = try TemporaryDirectory()
        let server = GQLServer(WebSocket: "ws" + peer.ready.dropFirst("http".count) + "hostile-subscriptions")
        let db = try GQLDatabase(path: directory.path("app.sqlite"))
        try db.register(SyncedNote.self)
        var configuration = GQLSync.Configuration()
        configuration.queries = try syncTestQueries()
        configuration.delivers = false
        let sync = try GQLSync(server, database: db, configuration: configuration)
        let live = try sync.live(SyncedNote.self, subscriptions: ["OnCreateNote"])

        // The twelve events the scenario sends, however slowly they come (the suite's time limit bounds the wait).
        var seen: [String] = []
        for await event in live.events {
            switch event {
            case .applied(let field, let written, let deleted, let kept):
                seen.append("applied \(field) \(written) \(deleted) \(kept)")
            case .failed(let error): seen.append("failed \(error)")
            case .pulled: seen.append("pulled")
            }
            if seen.count >= 12 { break }
        }
        let expected = [
            "applied onCreateNote 1 0 0",
            "failed GQLError.invalidResponse: the event onCreateNote carries Int, not an item [operation: onCreateNote]",
            "failed GQLError.invalidResponse: a subscription event must carry one field of data [operation: live]",
            "failed GQLError.invalidResponse: a subscription event must carry one field of data [operation: live]",
            "failed GraphQL errors: boom",
            "failed GQLError.decoding: onCreateNote: item 0 has a _deleted that is String, not a Bool [table: Note]",
            "failed GQLError.decoding: onCreateNote: item 0 has a _version that is String, not a whole number [table: Note]",
            "failed GQLError.decoding: onCreateNote: item 0 is not an object with a 'id' key [table: Note]",
            "failed GQLError.decoding: onCreateNote: item 0 has a 'id' key that is Object, not a string or a number [table: Note]",
            "failed GQLError.invalidResponse: the event onCreateNote carries Array, not an item [operation: onCreateNote]",
            "applied onCreateNote 1 0 0",
            "failed GQLError.closed: the server ended the subscription OnCreateNote: its events no longer reach the store "
                + "(stop this live sync and start another) [operation: OnCreateNote]",
        ]
        #expect(seen == expected)
        #expect(try SyncedNote.fetchAll(db, order: "id").map(\.id) == ["first", "last"])
        await live.stop()
        try await sync.shutdown()
        try await server.shutdown()
        try await db.close()
        await peer.stop()
        directory.cleanup()
    }
}
