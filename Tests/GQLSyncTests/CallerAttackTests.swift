import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// A caller's worst: names that are no operation, values JSON cannot hold, enormous strings, keys of odd kinds,
/// calls after a shutdown and during one. Each is an error that names the call and the value, or an item that is
/// kept; nothing acknowledged is lost.
@Suite(.timeLimit(.minutes(2))) struct CallerAttackTests {
    @Test func valuesJSONCannotHoldAreRefusedNamingTheValueAndTheCall() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        for bad in [Double.nan, .infinity, -.infinity] {
            for call in 0..<3 {
                let error = #expect(throws: GQLError.self) {
                    switch call {
                    case 0: try sync.steady("UpdateNote", ["id": "a", "score": bad])
                    case 1:
                        try sync.lazy(
                            "UpdateNote", ["id": "a", "nested": ["deep": .array([1, .double(bad)])] as GQLValue], "a")
                    default: try sync.steady("UpdateNote", ["id": "a"], bad)
                    }
                }
                #expect(error?.operation == "UpdateNote", "\(bad) \(call)")
                let named = ["the value of 'score'", "the value of 'nested'", "the key"][call]
                #expect(error?.message.contains(named) == true, "\(error.map { "\($0)" } ?? "")")
            }
        }
        #expect(sync.pendingCount == 0)
        #expect(try sync.database.fetchAll(sql: "SELECT id FROM _gqlsync_outbox").isEmpty)
        await fixture.finish(sync)
    }

    @Test(arguments: [
        ("maximumAttempts", "must be at least 1"), ("negativeAttempts", "must be at least 1"),
        ("spacedHeader", "is not an HTTP header name"), ("emptyHeader", "is not an HTTP header name"),
        ("newlineHeader", "is not an HTTP header name"), ("zeroBackoff", "longer than zero"),
        ("negativeBackoff", "longer than zero"), ("zeroBatch", "batchSize must be at least 1"),
    ])
    func settingsTheLoopCannotWorkWithAreRefusedAtInit(setting: String, message: String) async throws {
        // Each used to show only later: every item set aside (a header HTTP refuses, no attempt allowed), or a
        // failing server retried without a pause.
        let fixture = try await SyncFixture.make(started: false)
        let configuration = fixture.configuration {
            switch setting {
            case "maximumAttempts": $0.maximumAttempts = 0
            case "negativeAttempts": $0.maximumAttempts = -3
            case "spacedHeader": $0.idempotencyHeader = "Idempotency Key"
            case "emptyHeader": $0.idempotencyHeader = ""
            case "newlineHeader": $0.idempotencyHeader = "Key\r\nX-Injected: 1"
            case "zeroBackoff": $0.backoff = GQLBackoff(initialDelay: .zero, maximumDelay: .zero)
            case "negativeBackoff": $0.backoff = GQLBackoff(initialDelay: .seconds(-1), maximumDelay: .seconds(1))
            default: $0.batchSize = 0
            }
        }
        for _ in 1...2 {  // a refused engine leaves its name free
            let error = #expect(throws: GQLError.self) {
                try GQLSync(fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: configuration)
            }
            #expect(
                error?.code == .invalidArgument && error?.message.contains(message) == true,
                "\(error.map { "\($0)" } ?? "")")
        }
        await fixture.finish()
    }

    @Test func namesThatAreNoMutationAreRefused() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        for name in [
            "", " ", "NoSuchMutation", String(repeating: "x", count: 100_000), "CreateNote\0", "ListNotes",
            "OnCreateNote", "SyncNotes",
        ] {
            #expect(throws: GQLError.self, "\(name.prefix(20))") { try sync.steady(name, ["n": 1]) }
            await #expect(throws: GQLError.self) { try await sync.lazy(name, ["n": 1], 1) }
            await #expect(throws: GQLError.self) { _ = try await sync.force(name, ["n": 1]) }
        }
        #expect(sync.pendingCount == 0)
        await fixture.finish(sync)
    }

    @Test func keysOfEveryKindAndAnEnormousValueAreKeptAndSent() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.delivers = false })
        let keys: [any GQLValueConvertible] = [
            Int64.min, Int64.max, -0.0, 1e300, "", String(repeating: "k", count: 10_000), "\u{0}\"\\\n", true,
            [1, 2] as GQLValue, ["a": nil] as GQLValue, Data([0, 255]), GQLValue.null,
        ]
        var ids: [Int64] = []
        for (n, key) in keys.enumerated() {
            ids.append(try await sync.lazy("CreateNote", ["n": n], key))
            ids.append(try await sync.lazy("CreateNote", ["n": n], key))  // merges when the key reads back
        }
        let huge = try await sync.steady("CreateNote", ["n": 99, "title": String(repeating: "é", count: 3_000_000)])
        try await sync.shutdown()

        // Each key's second call merged into its first: the key reads back as it was written.
        #expect(stride(from: 0, to: ids.count, by: 2).allSatisfy { ids[$0] == ids[$0 + 1] })
        #expect(Set(ids).count == keys.count)

        // A server that refuses the 6 MB item at the transport level would have it retried for ever: give up.
        let sender = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.maximumAttempts = 3 })
        try await sender.drain()
        // Every key's item went out once, in call order; the 6 MB one was either taken or set aside, not lost.
        let applied = try fixture.server.appliedNumbers()
        #expect(applied.filter { $0 != 99 } == Array(0..<keys.count))
        let failed = try sender.failedItems().map(\.id)
        #expect(applied.contains(99) != failed.contains(huge))
        await fixture.finish(sender)
    }

    @Test func callsAfterAShutdownAreRefusedOrKept() async throws {
        let fixture = try await SyncFixture.make(started: false)
        // An engine in its own file closes it: a later call is an error, not a crash.
        let own = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        try await own.shutdown()
        try await own.shutdown()
        #expect(throws: GQLError.self) { try own.steady("CreateNote", ["n": 1]) }
        await #expect(throws: GQLError.self) { try await own.lazy("CreateNote", ["n": 1], 1) }
        await #expect(throws: GQLError.self) { try await own.drain() }
        #expect(throws: GQLError.self) { try own.retry(1) }
        own.resume()

        // In the app's database the call still commits: the next engine sends it.
        let db = try fixture.appDatabase()
        let shared = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        try await shared.shutdown()
        let id = try await shared.steady("CreateNote", ["n": 7])
        await #expect(throws: GQLError.self) { try await shared.drain() }
        // Opened while the server is still down, so that the item cannot be delivered before the count is read.
        let next = try GQLSync(fixture.client, database: db, configuration: fixture.configuration())
        #expect(next.pendingCount == 1)
        try await fixture.server.start()
        next.resume()
        try await next.drain()
        #expect(try fixture.server.appliedNumbers() == [7])
        #expect(id == 1)
        await fixture.finish(next)
    }

    @Test func aServerShutDownBeforeTheEngineSetsNoItemAside() async throws {
        // The app shuts its GQLServer down first: every later send fails with `.closed`, which says nothing about
        // the items; they stay queued for the next run instead of being set aside as refused, one after the other.
        let fixture = try await SyncFixture.make()
        let path = fixture.directory.path("outbox.sqlite")
        let client = GQLServer(HTTP: fixture.server.http)
        let sync = try GQLSync(client, path: path, configuration: fixture.configuration())
        try await client.shutdown()
        let settled = onStatus(sync) { statuses in
            await waitForStatus(statuses) { status in
                if case .failed? = status.event { return true }
                return !status.isOnline
            }
        }
        for n in 1...5 { try await sync.steady("CreateNote", ["n": n]) }
        let seen = try await OutboxFileAttackTests.within(10, "going offline") { await settled.value }
        settled.cancel()
        #expect(seen?.last?.isOnline == false)
        #expect(try sync.failedItems().isEmpty)
        #expect(sync.pendingCount == 5)
        try await sync.shutdown()
        let next = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        try await next.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3, 4, 5])
        await fixture.finish(next)
    }

    @Test func aShutdownDuringCallsLosesNoAcknowledgedItem() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        let sync = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        let acknowledged = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var ids: [Int64] = []
                    for n in 0..<100 {
                        do {
                            ids.append(
                                n % 2 == 0
                                    ? try await sync.steady("CreateNote", ["n": worker * 1000 + n])
                                    : try await sync.lazy("CreateNote", ["n": worker * 1000 + n], worker))
                        } catch let error as GQLError {
                            #expect(error.code == .closed || error.code == .sqlite, "\(error)")
                            break
                        }
                    }
                    return ids
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(20))
                try await sync.shutdown()
                return []
            }
            var all: [Int64] = []
            for try await ids in group { all += ids }
            return Set(all)
        }
        let reopened = try GQLSync(
            fixture.client, path: path, configuration: fixture.configuration { $0.delivers = false })
        let stored = Set(
            try reopened.database.fetchAll(sql: "SELECT id FROM _gqlsync_outbox WHERE state = 'pending'").compactMap {
                $0["id"]?.intValue
            })
        #expect(acknowledged.isSubset(of: stored))
        #expect(reopened.pendingCount == stored.count)
        await fixture.finish(reopened)
    }
}
