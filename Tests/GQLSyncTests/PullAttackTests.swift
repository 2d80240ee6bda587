import Foundation
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Pulls from a server whose delta pages are wrong in every way a page can be (``HostileServer``): each is an
/// error naming the page and what is wrong, the pages before it stay written and the cursor does not move; a
/// stored cursor no clock could have made is a base pull, not a crash.
@Suite(.timeLimit(.minutes(2))) struct PullAttackTests {
    /// A pull world: the app's database with `Note`, an engine in it, and a server answering `pages(index, body)`.
    struct World {
        let directory: TemporaryDirectory
        let hostile: HostileServer
        let client: GQLServer
        let db: GQLDatabase
        let sync: GQLSync

        init(
            _ edit: (inout GQLSync.Configuration) -> Void = { _ in },
            pages: @escaping @Sendable (Int, String) -> HostileServer.Reply
        ) throws {
            directory = try TemporaryDirectory()
            hostile = try HostileServer(pages)
            var options = GQLServer.Configuration()
            options.timeout = .seconds(5)
            client = GQLServer(HTTP: hostile.url, configuration: options)
            db = try GQLDatabase(path: directory.path("app.sqlite"))
            try db.register(SyncedNote.self)
            var configuration = GQLSync.Configuration()
            configuration.queries = try syncTestQueries()
            configuration.delivers = false
            edit(&configuration)
            sync = try GQLSync(client, database: db, configuration: configuration)
        }

        func pull() async throws -> GQLSync.PullReport {
            try await sync.pull(SyncedNote.self, query: "SyncNotes")
        }

        func finish() async {
            try? await sync.shutdown()
            hostile.stop()
            try? await client.shutdown()
            try? await db.close()
            directory.cleanup()
        }
    }

    /// A page of `syncNotes`: `items` and the rest of the connection as JSON text.
    static func page(_ items: String, nextToken: String = "null", startedAt: String = "1700000000000")
        -> HostileServer.Reply
    {
        .json(
            #"{"data":{"syncNotes":{"items":["# + items + #"],"nextToken":"# + nextToken + #","startedAt":"# + startedAt
                + "}}}")
    }

    static let note = #"{"id":"a","title":"t","_version":1}"#

    /// The pull's error, which must name `page`, and whose message must contain `text`.
    static func expectRefusal(
        _ world: World, page: Int, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            let report = try await world.pull()
            Issue.record("the pull succeeded: \(report)", sourceLocation: sourceLocation)
        } catch let error as GQLError {
            #expect(error.message.contains("page \(page) of SyncNotes"), "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("not a GQLError: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func pagesThatGoRoundInACircleStop() async throws {
        // a → b → c → a …; after 30 pages the script gives up with a last page, which the pull must not reach.
        let world = try World { index, _ in
            index >= 30
                ? Self.page(Self.note) : Self.page(Self.note, nextToken: ["\"a\"", "\"b\"", "\"c\""][index % 3])
        }
        await Self.expectRefusal(world, page: 4, "answers the nextToken page 2 was asked with")
        #expect(world.hostile.requestCount == 4)
        #expect(try world.sync.pullCursors().isEmpty)
        await world.finish()
    }

    @Test func newTokensForEverStopAtThePageLimit() async throws {
        #expect(GQLSync.Configuration().pullPageLimit == 10_000)
        // Every page a new token and a new note: a server paging for ever (the script gives up after 40).
        let world = try World({ $0.pullPageLimit = 25 }) { index, _ in
            Self.page(#"{"id":"n\#(index)","_version":1}"#, nextToken: index >= 40 ? "null" : "\"t\(index)\"")
        }
        do {
            let report = try await world.pull()
            Issue.record("the pull succeeded: \(report)")
        } catch let error as GQLError {
            #expect(error.code == .invalidResponse)
            #expect(error.message.contains("SyncNotes still had a nextToken after 25 pages"), "\(error)")
        }
        #expect(world.hostile.requestCount == 25)
        // The pages fetched are written, each whole; the cursor did not move past the pull that did not finish.
        #expect(try SyncedNote.fetchAll(world.db).count == 25)
        #expect(try world.sync.pullCursors().isEmpty)
        await world.finish()

        // A pull that ends on its last allowed page is a pull like any other.
        let ending = try World({ $0.pullPageLimit = 3 }) { index, _ in
            Self.page(#"{"id":"n\#(index)"}"#, nextToken: index == 2 ? "null" : "\"t\(index)\"")
        }
        #expect(try await ending.pull().pages == 3)
        #expect(try ending.sync.pullCursors().count == 1)
        await ending.finish()

        let none = try World({ $0.pullPageLimit = 0 }) { _, _ in Self.page(Self.note) }
        let error = await #expect(throws: GQLError.self) { try await none.pull() }
        #expect(error?.code == .invalidArgument && error?.message.contains("pullPageLimit") == true)
        #expect(none.hostile.requestCount == 0)
        await none.finish()
    }

    @Test func theSameTokenForEverStops() async throws {
        let world = try World { _, _ in Self.page(Self.note, nextToken: "\"same\"") }
        await Self.expectRefusal(world, page: 2, "repeats the nextToken it was asked for")
        await world.finish()
    }

    @Test(arguments: [#""1700000000000""#, "-5", "1.5", "true", "{}", "[]", "1e300"])
    func aStartedAtThatIsNoTimeIsRefused(startedAt: String) async throws {
        let world = try World { _, _ in Self.page(Self.note, startedAt: startedAt) }
        await Self.expectRefusal(world, page: 1, "`startedAt` is")
        #expect(try SyncedNote.fetchAll(world.db).isEmpty)
        #expect(try world.sync.pullCursors().isEmpty)
        await world.finish()
    }

    @Test func aMissingOrNullStartedAtStoresNoCursor() async throws {
        let world = try World { index, _ in
            index == 0
                ? .json(#"{"data":{"syncNotes":{"items":[],"nextToken":null}}}"#) : Self.page("", startedAt: "null")
        }
        #expect(try await world.pull().cursor == nil)
        #expect(try await world.pull().cursor == nil)
        #expect(try world.sync.pullCursors().isEmpty)
        await world.finish()
    }

    @Test(arguments: [
        (#"{"title":"no key"}"#, "is not an object with a 'id' key"),
        (#"{"id":null}"#, "is not an object with a 'id' key"),
        ("5", "is not an object with a 'id' key"),
        (#"{"id":{"a":1}}"#, "has a 'id' key that is Object, not a string or a number"),
        (#"{"id":[1]}"#, "has a 'id' key that is Array, not a string or a number"),
        (#"{"id":true}"#, "has a 'id' key that is Bool, not a string or a number"),
        (#"{"id":"a","_version":"3"}"#, "has a _version that is String, not a whole number"),
        (#"{"id":"a","_version":1.5}"#, "has a _version that is Double, not a whole number"),
        (#"{"id":"a","_deleted":"true"}"#, "has a _deleted that is String, not a Bool"),
        (#"{"id":"a","_deleted":1}"#, "has a _deleted that is Int, not a Bool"),
    ])
    func itemsOfTheWrongShapeAreRefusedByPageAndIndex(item: String, message: String) async throws {
        // The first page is fine and stays written; the second carries the bad item after a good one.
        let world = try World { index, _ in
            index == 0
                ? Self.page(#"{"id":"first","title":"kept"}"#, nextToken: "\"next\"")
                : Self.page(#"{"id":"b"},"# + item)
        }
        await Self.expectRefusal(world, page: 2, "item 1 " + message)
        #expect(try SyncedNote.fetchAll(world.db).map(\.id) == ["first"])
        #expect(try world.sync.pullCursors().isEmpty)
        await world.finish()
    }

    @Test func aPullIntoTheEnginesOrSQLitesTablesIsRefused() async throws {
        // Server items written there would rewrite or delete outbox items, cursors or the schema (a live sync's
        // events go through the same check).
        let world = try World { _, _ in Self.page(#"{"id":1,"engine":"other","input":"{}"}"#) }
        for table in ["_gqlsync_outbox", "_GQLSYNC_cursors", "sqlite_master", "sqlite_sequence", "gql_migrations"] {
            let error = await #expect(throws: GQLError.self, "\(table)") {
                try await world.sync.pull(table, query: "SyncNotes")
            }
            #expect(error?.code == .invalidArgument, "\(table)")
        }
        #expect(world.hostile.requestCount == 0)
        await world.finish()
    }

    @Test func aStoredCursorNoClockCouldHaveMadeIsABasePull() async throws {
        let world = try World({ $0.baseSyncInterval = .seconds(Int64.max) }) { _, _ in Self.page(Self.note) }
        #expect(try await world.pull().kind == .base)
        #expect(try await world.pull().kind == .delta)
        // Dates a hand (or a broken clock) put in the cursor table: the distant past, the far future.
        // Within an interval of Int64.max seconds even the distant past is recent; a cursor taken after now has
        // no age to trust.
        let cases: [(Int64, Int64, GQLSync.PullReport.Kind)] = [
            (Int64.max, Int64.min, .delta), (Int64.min, Int64.max, .base), (0, Int64.max - 1, .base),
        ]
        for (startedAt, takenAt, kind) in cases {
            try await world.db.execute(
                "UPDATE _gqlsync_cursors SET started_at = ?, taken_at = ?", [startedAt, takenAt])
            #expect(try await world.pull().kind == kind, "\(startedAt) \(takenAt)")
        }
        await world.finish()
    }

    @Test func aCursorFromTheDistantPastIsABasePullWithTheDefaultInterval() async throws {
        let world = try World { _, _ in Self.page(Self.note) }
        #expect(try await world.pull().kind == .base)
        try await world.db.execute("UPDATE _gqlsync_cursors SET taken_at = ?", [Int64.min])
        #expect(try await world.pull().kind == .base)
        await world.finish()
    }
}
