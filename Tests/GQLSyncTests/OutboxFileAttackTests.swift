import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Outbox databases and journals that are damaged, edited by hand, of a later layout or of another outbox: an
/// engine opened on them throws an error that says what is wrong, or sets the bad rows aside and delivers the
/// rest; it never stops the queue, crashes or loses an item.
@Suite(.timeLimit(.minutes(2))) struct OutboxFileAttackTests {
    /// `body` within `seconds`, or a recorded issue naming `what` (a hang fails the test instead of the suite).
    static func within<T: Sendable>(
        _ seconds: Int, _ what: String, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            if first == nil { Issue.record("\(what) did not finish within \(seconds) s") }
            return first
        }
    }

    /// Queues items `1...count` (`CreateNote n`) in an engine that does not deliver, then shuts it down.
    static func queue(_ fixture: SyncFixture, _ path: String, count: Int) async throws {
        let queue = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        for n in 1...count { try await queue.steady("CreateNote", ["n": n]) }
        try await queue.shutdown()
    }

    static func edit(_ path: String, _ sql: String, _ arguments: GQLArguments = []) async throws {
        let db = try GQLDatabase(path: path)
        try await db.execute(sql, arguments)
        try await db.close()
    }

    @Test(arguments: [1, 3]) func rowsThatCannotBeSentAreSetAsideAndTheQueueGoesOn(batchSize: Int) async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        try await Self.queue(fixture, path, count: 8)
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET input = '{\"n\": 2' WHERE id = 2")
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET op = 999 WHERE id = 3")
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET key = '{oops' WHERE id = 4")
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET input = '[1, 2]', op = 'x' WHERE id = 5")
        // JSON, but no object; an object with a number no double holds (SQLite's json_valid takes both).
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET input = '[1, 2]' WHERE id = 6")
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET input = '{\"n\": 1e400}' WHERE id = 7")

        // Every edited row still counts as pending when an engine opens (none is hidden). Read by an engine that
        // does not deliver: the one below starts sending as it opens and may have sent item 1 before a look.
        let look = try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        #expect(look.pendingCount == 8)
        try await look.shutdown()
        let sync = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.batchSize = batchSize })
        _ = try await Self.within(20, "drain") { try await sync.drain() }
        #expect(try fixture.server.appliedNumbers() == [1, 8])
        let failed = try sync.failedItems()
        #expect(failed.map(\.id) == [2, 3, 4, 5, 6, 7])
        #expect(failed.map(\.name) == ["CreateNote", "", "CreateNote", "", "CreateNote", "CreateNote"])
        let messages = failed.map(\.failure.message)
        try #require(messages.count == 6)
        #expect(messages[0].contains("outbox item 2 has values that are not JSON"))
        #expect(messages[1].contains("outbox item 3 names operation 999, which is not stored"))
        #expect(messages[2].contains("outbox item 4 has a key that is not JSON"))
        #expect(messages[3].contains("outbox item 5 names its operation by String"))
        #expect(messages[4].contains("outbox item 6 has Array values, not a JSON object"))
        #expect(messages[5].contains("outbox item 7 has values that are not JSON (number out of range"))
        #expect(sync.pendingCount == 0 && sync.driver.current.failedCount == 6)
        // The app can drop what it cannot repair.
        for item in failed { try sync.drop(item.id) }
        #expect(try sync.failedItems().isEmpty)
        await fixture.finish(sync)
    }

    @Test func itemsInAnUnknownStateAreSetAsideAtOpenNotHidden() async throws {
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        try await Self.queue(fixture, path, count: 3)
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET state = 'sending' WHERE id = 2")
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        _ = try await Self.within(20, "drain") { try await sync.drain() }
        #expect(try fixture.server.appliedNumbers() == [1, 3])
        let failed = try sync.failedItems()
        #expect(failed.map(\.id) == [2])
        #expect(failed.first?.failure.message == "the item was in the unknown state 'sending'")
        #expect(sync.pendingCount == 0)
        try sync.retry(2)
        _ = try await Self.within(20, "drain") { try await sync.drain() }
        #expect(try fixture.server.appliedNumbers() == [1, 3, 2])
        await fixture.finish(sync)
    }

    @Test func aFailedItemWhoseStoredReasonIsNotJSONIsStillListed() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        try await Self.queue(fixture, path, count: 2)
        try await Self.edit(path, "UPDATE _gqlsync_outbox SET state = 'failed', error = 'kaput{' WHERE id IN (1, 2)")
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        let failed = try sync.failedItems()
        #expect(failed.map(\.id) == [1, 2])
        #expect(failed.first?.failure.message == "outbox item 1's stored failure cannot be read: kaput{")
        #expect(failed.first?.variables == ["input": ["n": 1]])
        await fixture.finish(sync)
    }

    @Test func filesThatAreNoOutboxOfThisVersionAreRefusedWithAnError() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let zeros = fixture.directory.path("zeros.sqlite")
        try writeFile(zeros, Data(count: 8192))
        let text = fixture.directory.path("text.sqlite")
        try writeFile(text, Data("not a database, just text\n".utf8))
        // A real outbox cut in half.
        let cut = fixture.directory.path("cut.sqlite")
        try await Self.queue(fixture, cut, count: 200)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cut)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: cut))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
        // An outbox a later version upgraded.
        let later = fixture.directory.path("later.sqlite")
        try await Self.queue(fixture, later, count: 1)
        try await Self.edit(
            later, "INSERT INTO gql_migrations (namespace, version, name) VALUES ('gqlsync', 99, 'later')")

        for path in [zeros, text, cut, later] {
            // Twice: a refused open leaves the engine's name free.
            for _ in 1...2 {
                let error = #expect(throws: GQLError.self, "\(path)") {
                    let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
                    _ = try sync.failedItems()
                    _ = try sync.database.fetchAll(sql: "SELECT count(*) FROM _gqlsync_outbox")
                }
                #expect(error?.message.contains("already runs") == false, "\(path)")
            }
        }
        let refusal = #expect(throws: GQLError.self) {
            try GQLSync(fixture.client, path: later, configuration: fixture.configuration())
        }
        #expect(refusal?.code == .downgradeAttempt)
        await fixture.finish()
    }
}
