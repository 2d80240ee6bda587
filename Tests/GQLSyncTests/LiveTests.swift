import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Live sync: subscription events into the store, and the gap filled by a delta pull after each reconnect.
@Suite(.timeLimit(.minutes(2))) struct LiveTests {
    /// A client with HTTP and a WebSocket that reconnects quickly.
    static func socketClient(_ fixture: SyncFixture) -> GQLServer {
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(10)
        configuration.reconnect = .init(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500))
        return GQLServer(HTTP: fixture.server.http, WebSocket: fixture.server.webSocket, configuration: configuration)
    }

    static let subscriptions = ["OnCreateNote", "OnUpdateNote", "OnDeleteNote"]

    /// Reads `events` until `predicate` holds for one; that event.
    static func next(
        _ events: inout AsyncStream<GQLSync.Live.Event>.Iterator, _ predicate: (GQLSync.Live.Event) -> Bool
    ) async -> GQLSync.Live.Event? {
        while let event = await events.next() {
            if predicate(event) { return event }
        }
        return nil
    }

    static func isPull(_ event: GQLSync.Live.Event) -> Bool {
        if case .pulled = event { return true }
        return false
    }

    static func isApplied(_ event: GQLSync.Live.Event) -> Bool {
        if case .applied = event { return true }
        return false
    }

    @Test func eventsAreWrittenIntoTheStore() async throws {
        let fixture = try await SyncFixture.make()
        let client = Self.socketClient(fixture)
        let db = try fixture.appDatabase()
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...3)
        let live = try sync.live(SyncedNote.self, subscriptions: Self.subscriptions, query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        // The first connection catches up with what the server had.
        guard case .pulled(let first)? = await Self.next(&events, Self.isPull) else {
            Issue.record("live sync ended before its first pull")
            return
        }
        #expect(first.written == 3)

        try await fixture.createNotes(4...4)
        _ = await Self.next(&events, Self.isApplied)
        #expect(try SyncedNote.fetchOne(db, key: "note-4")?.title == "title 4")
        try await fixture.retitle("note-1", "renamed")
        _ = await Self.next(&events, Self.isApplied)
        #expect(
            try SyncedNote.fetchOne(db, key: "note-1") == SyncedNote(id: "note-1", title: "renamed", n: 1, _version: 2))
        try await fixture.deleteNote("note-2")
        guard case .applied(let field, _, let deleted, _)? = await Self.next(&events, Self.isApplied) else {
            Issue.record("no delete event")
            return
        }
        #expect(field == "onDeleteNote" && deleted == 1)
        #expect(try SyncedNote.fetchAll(db, order: "n").map(\.n) == [1, 3, 4])

        await live.stop()
        #expect(await events.next() == nil)
        await fixture.finish(sync)
        try? await client.shutdown()
    }

    @Test func aReconnectFillsTheGapWithADeltaPull() async throws {
        let fixture = try await SyncFixture.make()
        let client = Self.socketClient(fixture)
        let db = try fixture.appDatabase()
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...4)
        let live = try sync.live(SyncedNote.self, subscriptions: Self.subscriptions, query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        _ = await Self.next(&events, Self.isPull)
        #expect(try SyncedNote.count(db) == 4)

        // The server goes away; its data changes while no socket can hear it; it comes back on the same port.
        let lost = Task {
            for await state in client.connectionStates {
                if case .reconnecting = state { return true }
            }
            return false
        }
        await fixture.server.stop()
        #expect(await lost.value)
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded()) + 1
        let server = try GQLDatabase(path: fixture.server.databasePath)
        try await server.execute(
            "UPDATE Note SET title = 'while down', _version = _version + 1, _lastChangedAt = ? WHERE id = 'note-1'",
            [now])
        try await server.execute(
            "UPDATE Note SET _deleted = 1, _version = _version + 1, _lastChangedAt = ? WHERE id = 'note-2'", [now])
        try await server.execute(
            """
            INSERT INTO Note (id, title, n, createdAt, updatedAt, _version, _deleted, _lastChangedAt)
            VALUES ('note-9', 'born while down', 9, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1, 0, ?)
            """, [now])
        try await server.close()
        try await fixture.server.start()

        guard case .pulled(let gap)? = await Self.next(&events, Self.isPull) else {
            Issue.record("no pull after the reconnect")
            return
        }
        #expect(gap.kind == .delta)
        #expect(gap.written == 2 && gap.deleted == 1)
        #expect(try SyncedNote.fetchOne(db, key: "note-1")?.title == "while down")
        #expect(try SyncedNote.fetchOne(db, key: "note-2") == nil)
        #expect(try SyncedNote.fetchOne(db, key: "note-9")?.title == "born while down")

        // Subscriptions are live again after the reconnect.
        try await fixture.createNotes(10...10)
        _ = await Self.next(&events, Self.isApplied)
        #expect(try SyncedNote.fetchOne(db, key: "note-10") != nil)
        await live.stop()
        await fixture.finish(sync)
        try? await client.shutdown()
    }

    /// The gap-filling pull reads only once the server has registered every subscription: an update made while
    /// one is still being registered (no event of it can reach the app) reaches the store through the pull. The
    /// server holds OnUpdateNote's registration until the test has made the update.
    @Test func thePullWaitsForTheSubscriptionsToBeRegistered() async throws {
        let gate = HeldGate(holding: "OnUpdateNote")
        let fixture = try await SyncFixture.make(beforeSubscriptionStarts: { await gate.pass($0) })
        let client = Self.socketClient(fixture)
        let db = try fixture.appDatabase()
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...2)
        let live = try sync.live(SyncedNote.self, subscriptions: Self.subscriptions, query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        // The socket is acknowledged and OnUpdateNote is on its way in: before the fix the pull ran from here on,
        // read version 1, and the update below reached no one.
        await gate.held()
        try await fixture.retitle("note-1", "while registering")
        gate.open()
        guard case .pulled(let first)? = await Self.next(&events, Self.isPull) else {
            Issue.record("live sync ended before its first pull")
            return
        }
        #expect(first.written == 2)
        #expect(
            try SyncedNote.fetchOne(db, key: "note-1")
                == SyncedNote(id: "note-1", title: "while registering", n: 1, _version: 2))

        // Every subscription is live once the pull reported: a change now arrives as an event, without waiting.
        try await fixture.retitle("note-2", "after the pull")
        guard case .applied(let field, let written, _, _)? = await Self.next(&events, Self.isApplied) else {
            Issue.record("no event after the pull")
            return
        }
        #expect(field == "onUpdateNote" && written == 1)
        #expect(try SyncedNote.fetchOne(db, key: "note-2")?.title == "after the pull")
        await live.stop()
        await fixture.finish(sync)
        try? await client.shutdown()
    }

    /// An event held during the pull can be older than the pulled row: here the app hears no deletes, so the row's
    /// delete (after the held event) comes only with the pull, and the held event written after it would bring the
    /// row back. The pull reads again after the held events: the row stays deleted. The server holds the second
    /// subscription's registration (the first is live) while the test changes the row the first one hears of.
    @Test func aRowDeletedAfterAHeldEventStaysDeleted() async throws {
        let gate = HeldGate(holdingCall: 2)
        let fixture = try await SyncFixture.make(beforeSubscriptionStarts: { await gate.pass($0) })
        let client = Self.socketClient(fixture)
        let db = try fixture.appDatabase()
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration())
        try await fixture.createNotes(1...2)
        let live = try sync.live(SyncedNote.self, subscriptions: ["OnCreateNote", "OnUpdateNote"], query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        await gate.held()
        // An event of the live subscription, then a delete that brings none, both before the pull reads.
        let id: String
        if gate.passed.first == "OnUpdateNote" {
            id = "note-1"
            try await fixture.retitle(id, "held")
        } else {
            id = "note-5"
            try await fixture.createNotes(5...5)
        }
        try await fixture.deleteNote(id)
        gate.open()
        _ = await Self.next(&events, Self.isPull)
        // A change after the catch-up began: its event is written after everything the catch-up writes.
        try await fixture.createNotes(6...6)
        while try SyncedNote.fetchOne(db, key: "note-6") == nil {
            guard await Self.next(&events, Self.isApplied) != nil else { break }
        }
        #expect(try SyncedNote.fetchOne(db, key: "note-6") != nil)
        #expect(try SyncedNote.fetchOne(db, key: id) == nil)
        await live.stop()
        await fixture.finish(sync)
        try? await client.shutdown()
    }

    /// The hold keeps at most its limit: past it an event is the caller's to write at once, and the pull is to run
    /// again. (That every event is then written is the live sync's: an event not held is written as it comes.)
    @Test func theHoldIsBounded() {
        let hold = LiveHold(limit: 3)
        let event = GQLResult(data: .object(["onCreateNote": .object(["id": .string("note-1")])]))
        #expect(!hold.hold(event))  // not holding yet
        hold.begin()
        #expect(!hold.needsAnotherPull())
        let held = (0..<10).map { _ in hold.hold(event) }
        #expect(held == [true, true, true] + Array(repeating: false, count: 7))
        #expect(hold.count == 3)
        #expect(hold.drain().count == 3 && hold.count == 0)
        #expect(hold.needsAnotherPull() && !hold.needsAnotherPull())
        #expect(hold.hold(event))  // still holding after drain()
        #expect(hold.take().count == 1 && hold.take().isEmpty)
        #expect(!hold.hold(event))  // take() found none: holding ended
    }

    /// The hold's cap end to end (``theHoldIsBounded()`` is the hold alone): more events arrive while the pull waits
    /// than the live sync holds (a cap of 3 here; 10,000 by default). As <doc:PullAndLive> says, the events past the
    /// cap are written as they come, the pull reads again after the held ones are written, and nothing is lost: the
    /// store ends as the server is. The server holds the second subscription's registration, so the pull waits
    /// while the first one's events arrive; they are updates of one row when that one is OnUpdateNote (the held
    /// ones, older than the row the pulls leave, must not bring an older title back), or new rows when it is
    /// OnCreateNote. The first one asked for is mostly the first registered: both orders, for both cases.
    @Test(arguments: [["OnCreateNote", "OnUpdateNote"], ["OnUpdateNote", "OnCreateNote"]])
    func eventsPastTheHoldCapAreWrittenAtOnceAndNoneIsLost(subscriptions: [String]) async throws {
        let gate = HeldGate(holdingCall: 2)
        let fixture = try await SyncFixture.make(beforeSubscriptionStarts: { await gate.pass($0) })
        let client = Self.socketClient(fixture)
        let db = try fixture.appDatabase()
        let cap = 3
        let sync = try GQLSync(client, database: db, configuration: fixture.configuration { $0.liveHoldLimit = cap })
        try await fixture.createNotes(1...1)
        let live = try sync.live(SyncedNote.self, subscriptions: subscriptions, query: "SyncNotes")
        var events = live.events.makeAsyncIterator()
        await gate.held()
        // The catch-up holds from before it waits for the subscriptions (the gate keeps it waiting).
        while !live.hold.isHolding { await Task.yield() }
        let updates = gate.passed.first == "OnUpdateNote"
        let count = cap + 5
        for index in 2...(count + 1) {
            if updates {
                try await fixture.retitle("note-1", "title v\(index)")
            } else {
                try await fixture.createNotes(index...index)
            }
        }
        // The first `cap` are held; the rest are written at once, before any pull.
        var writtenAtOnce = 0
        for _ in 0..<(count - cap) {
            guard
                case .applied(_, let written, _, _)? = await Self.next(
                    &events, { Self.isApplied($0) || Self.isPull($0) })
            else {
                Issue.record("expected an event written at once, before the pull")
                break
            }
            writtenAtOnce += written
        }
        #expect(writtenAtOnce == count - cap)
        #expect(live.hold.count == cap)
        #expect(try SyncedNote.count(db) == (updates ? 1 : count - cap))

        // The pull, the held events after it, and (something was held) the pull again.
        gate.open()
        var pulls = 0
        while pulls < 2 {
            guard let event = await Self.next(&events, { Self.isPull($0) || Self.isApplied($0) }) else { break }
            if Self.isPull(event) { pulls += 1 }
        }
        #expect(pulls == 2)
        if updates {
            #expect(
                try SyncedNote.fetchAll(db)
                    == [SyncedNote(id: "note-1", title: "title v\(count + 1)", n: 1, _version: count + 1)])
        } else {
            #expect(try SyncedNote.fetchAll(db, order: "n").map(\.n) == Array(1...(count + 1)))
        }

        // The catch-up is over: a new event is written as it comes, with no pull before it.
        try await fixture.createNotes(100...100)
        let after = await Self.next(&events, { Self.isApplied($0) || Self.isPull($0) })
        #expect(after.map(Self.isApplied) == true)
        #expect(try SyncedNote.fetchOne(db, key: "note-100") != nil)
        await live.stop()
        await fixture.finish(sync)
        try? await client.shutdown()
    }

    @Test func liveNeedsSubscriptionsOverAWebSocket() async throws {
        let fixture = try await SyncFixture.make()
        let db = try fixture.appDatabase()
        let sync = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        #expect(throws: GQLError.self) { try sync.live(SyncedNote.self, subscriptions: Self.subscriptions) }
        let client = Self.socketClient(fixture)
        let socketSync = try GQLSync(
            client, database: db, configuration: fixture.configuration { $0.name = "socket" })
        #expect(throws: GQLError.self) { try socketSync.live(SyncedNote.self, subscriptions: ["SyncNotes"]) }
        #expect(throws: GQLError.self) { try socketSync.live(SyncedNote.self, subscriptions: []) }
        await fixture.finish(sync, socketSync)
        try? await client.shutdown()
    }
}
