import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Pull cursors are kept per query and variables: pulls of one query with other filters do not share where they
/// left off, and a cursor kept before they were (outbox step 8) still serves the pulls without variables.
@Suite(.timeLimit(.minutes(2))) struct PullCursorTests {
    /// Adds a pull query that takes a filter to the fixture's registry.
    static func loadFilteredQuery(_ fixture: SyncFixture) throws {
        try fixture.queries.load(
            """
            query SyncNotesWhere($filter: ModelNoteFilterInput, $limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
              syncNotes(filter: $filter, limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
                items { id title body n _version _deleted } nextToken startedAt
              }
            }
            """, sourceName: "pull-cursor-tests")
    }

    /// `{"filter": {"n": {comparison: n}}}`.
    static func filter(_ comparison: String, _ n: Int) -> [String: any GQLValueConvertible] {
        ["filter": GQLValue.object(["n": .object([comparison: .int(Int64(n))])])]
    }
    static func upTo(_ n: Int) -> [String: any GQLValueConvertible] { filter("le", n) }
    static func above(_ n: Int) -> [String: any GQLValueConvertible] { filter("gt", n) }

    @Test func pullsWithOtherVariablesHaveCursorsOfTheirOwn() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        try Self.loadFilteredQuery(fixture)
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...10)

        let low = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.upTo(5))
        #expect(low.kind == .base && low.written == 5)
        // Another filter of the same query: everything it selects, not only what changed since the first pull.
        let high = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.above(5))
        #expect(high.kind == .base && high.written == 5, "\(high)")
        #expect(try SyncedNote.fetchAll(db, order: "n").map(\.n) == Array(1...10))
        // And the query without variables has a cursor of its own too.
        #expect(try await sync.pull(SyncedNote.self, query: "SyncNotesWhere").kind == .base)

        // Each pull's next run asks only for its own changes.
        try await fixture.retitle("note-2", "changed low")
        try await fixture.retitle("note-8", "changed high")
        let lowDelta = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.upTo(5))
        #expect(lowDelta.kind == .delta && lowDelta.written == 1)
        let highDelta = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.above(5))
        #expect(highDelta.kind == .delta && highDelta.written == 1)
        #expect(try SyncedNote.fetchOne(db, key: "note-8")?.title == "changed high")
        #expect(
            try sync.pullCursors().map(\.variables) == [
                "", #"{"filter":{"n":{"gt":5}}}"#, #"{"filter":{"n":{"le":5}}}"#,
            ])

        // Forgetting one filter's cursor leaves the others; forgetting the query's forgets them all.
        try sync.resetCursor("SyncNotesWhere", variables: Self.upTo(5))
        #expect(try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.upTo(5)).kind == .base)
        #expect(try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.above(5)).kind == .delta)
        try sync.resetCursor("SyncNotesWhere")
        #expect(try sync.pullCursors().isEmpty)
        await fixture.finish(sync)
    }

    @Test func aCursorKeptBeforeVariablesKeyedItStillServesPullsWithoutThem() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        try Self.loadFilteredQuery(fixture)
        try await fixture.createNotes(1...3)
        try await Task.sleep(for: .milliseconds(20))
        let startedAt = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        try await Task.sleep(for: .milliseconds(20))
        try await fixture.createNotes(4...5)
        // An outbox of layout 7, whose cursor of SyncNotesWhere was kept by query alone.
        _ = try OutboxStore.migrator(through: 7).migrate(db)
        try await db.execute(
            "INSERT INTO _gqlsync_cursors (engine, query, started_at, taken_at) VALUES ('notes', 'SyncNotesWhere', ?, ?)",
            [startedAt, startedAt])

        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.name = "notes" })
        #expect(try sync.pullCursors() == [.init(query: "SyncNotesWhere", variables: "", startedAt: startedAt)])
        let delta = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere")
        #expect(delta.kind == .delta && delta.written == 2, "\(delta)")
        #expect(try SyncedNote.fetchAll(db, order: "n").map(\.n) == [4, 5])
        // A pull with variables has no cursor yet.
        let filtered = try await sync.pull(SyncedNote.self, query: "SyncNotesWhere", variables: Self.upTo(3))
        #expect(filtered.kind == .base && filtered.written == 3)
        await fixture.finish(sync)
    }
}
