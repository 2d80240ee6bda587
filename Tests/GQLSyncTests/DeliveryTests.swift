import Foundation
import GQLCore
import GQLDevServer
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// Delivery against a real dev server on SQLite files: order, durability, offline, poison items, faults.
@Suite(.timeLimit(.minutes(2))) struct DeliveryTests {
    @Test func itemsAreDeliveredOnceEachInCallOrder() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        for n in 1...40 {
            try await sync.steady("CreateNote", ["n": n])
        }
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...40))
        #expect(sync.pendingCount == 0)
        #expect(try sync.failedItems().isEmpty)
        await fixture.finish(sync)
    }

    @Test func anUnknownOperationIsAnErrorAtTheCall() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        #expect(throws: GQLError.self) { try sync.steady("NoSuchMutation", ["n": 1]) }
        let notMutation = #expect(throws: GQLError.self) { try sync.lazy("ListNotes", [:], 1) }
        #expect(notMutation?.message.contains("not a mutation") == true)
        #expect(sync.pendingCount == 0)
        await fixture.finish(sync)
    }

    @Test func textAndValuesAreCapturedAtCallTime() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        var values: [String: any GQLValueConvertible] = ["n": 1]
        try await sync.steady("CreateNote", values)
        values["n"] = 2
        fixture.queries.removeAll()  // nothing is looked up again at send time
        try await fixture.server.start()
        sync.resume()
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1])
        await fixture.finish(sync)
    }

    @Test func offlineItemsAreDeliveredInOrderWhenTheServerStarts() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let offline = watchStatus(sync, until: { $0.event == .offline })
        var ids: [Int64] = []
        for n in 1...20 { ids.append(try await sync.steady("CreateNote", ["n": n])) }
        let seen = await offline.value
        // Pending items are not dropped: the loop may be sending them.
        #expect(throws: GQLError.self) { try sync.drop(ids[5]) }
        #expect(seen.last?.isOnline == false)
        #expect(sync.pendingCount == 20)
        #expect(try fixture.server.appliedNumbers().isEmpty)

        let online = watchStatus(sync, until: { $0.event == .online })
        try await fixture.server.start()
        sync.resume()
        _ = await online.value
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...20))
        #expect(sync.isOnline)
        await fixture.finish(sync)
    }

    @Test func aPoisonItemIsSetAsideAndTheQueueGoesOn() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        var poison: Int64 = 0
        for n in 1...9 {
            if n == 5 {
                // Not an Int: the server refuses the variables, every time.
                poison = try await sync.steady("CreateNote", ["n": "five"])
            } else {
                try await sync.steady("CreateNote", ["n": n])
            }
        }
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == [1, 2, 3, 4, 6, 7, 8, 9])
        let failed = try sync.failedItems()
        #expect(failed.map(\.id) == [poison])
        #expect(failed.first?.name == "CreateNote")
        #expect(failed.first?.failure.errors.isEmpty == false)
        #expect(failed.first?.variables["input"]?["n"] == "five")
        #expect(sync.status.driver.current.failedCount == 1)

        // Retried as is, it fails again; dropped, it is gone.
        try sync.retry(poison)
        try await sync.drain()
        #expect(try sync.failedItems().map(\.id) == [poison])
        try sync.drop(poison)
        #expect(try sync.failedItems().isEmpty)
        #expect(throws: GQLError.self) { try sync.drop(poison) }
        #expect(throws: GQLError.self) { try sync.retry(poison) }
        await fixture.finish(sync)
    }

    @Test func faultsLoseAndReorderNothing() async throws {
        var faults = GQLDevServer.Faults()
        faults.failRate = 0.3
        faults.latencyMilliseconds = 20
        faults.seed = 7
        let fixture = try await SyncFixture.make(faults: faults)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration {
                $0.backoff = GQLBackoff(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(40))
            })
        let retries = onStatus(sync) { statuses in
            var count = 0
            for await status in statuses {
                if case .retrying? = status.event { count += 1 }
                if status.event == .drained, status.pendingCount == 0, count > 0 { break }
            }
            return count
        }
        for n in 1...60 { try await sync.steady("CreateNote", ["n": n]) }
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...60))
        #expect(await retries.value > 0)
        await fixture.finish(sync)
    }

    @Test func droppedSocketsLoseAndReorderNothing() async throws {
        var faults = GQLDevServer.Faults()
        faults.dropWebSocketsAfter = 7
        let fixture = try await SyncFixture.make(faults: faults)
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(5)
        let socketServer = GQLServer(WebSocket: fixture.server.webSocket, configuration: configuration)
        let sync = try GQLSync(
            socketServer, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let connections = Task {
            var count = 0
            for await state in socketServer.connectionStates where state == .connected { count += 1 }
            return count
        }
        for n in 1...50 { try await sync.steady("CreateNote", ["n": n]) }
        try await sync.drain()
        connections.cancel()
        #expect(await connections.value > 1)  // the server dropped sockets under the items
        // A mutation whose answer was lost with its socket is sent again: at most one repeat, in place.
        var collapsed: [Int] = []
        let applied = try fixture.server.appliedNumbers()
        for n in applied where collapsed.last != n { collapsed.append(n) }
        #expect(collapsed == Array(1...50))
        #expect(try sync.failedItems().isEmpty)
        await fixture.finish(sync)
        try? await socketServer.shutdown()
    }

    @Test func itemsSurviveARestartOfTheEngine() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let path = fixture.directory.path("outbox.sqlite")
        let first = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        for n in 1...5 { try await first.steady("CreateNote", ["n": n]) }
        try await first.shutdown()
        await #expect(throws: GQLError.self) { try await first.drain() }

        // Opened while the server is still down, so that none of the five can be delivered before the count is read.
        let second = try GQLSync(fixture.client, path: path, configuration: fixture.configuration())
        #expect(second.pendingCount == 5)
        try await fixture.server.start()
        second.resume()
        try await second.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...5))
        await fixture.finish(second)
    }

    @Test func enginesRunSideBySideInOneDatabase() async throws {
        let fixture = try await SyncFixture.make()
        let db = try GQLDatabase(path: fixture.directory.path("app.sqlite"))
        let a = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.name = "a" })
        let b = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.name = "b" })
        #expect(throws: GQLError.self) {
            _ = try GQLSync(fixture.client, database: db, configuration: fixture.configuration { $0.name = "a" })
        }
        for n in 1...10 {
            try await (n.isMultiple(of: 2) ? a : b).steady("CreateNote", ["n": n])
        }
        try await a.drain()
        try await b.drain()
        #expect(try fixture.server.appliedNumbers().sorted() == Array(1...10))
        #expect(try fixture.server.appliedNumbers().filter { $0.isMultiple(of: 2) } == [2, 4, 6, 8, 10])
        let left = try db.fetchRows(sql: "SELECT COUNT(*) FROM _gqlsync_outbox WHERE state <> 'removed'").rows.first?
            .first
        #expect(left == 0)
        await fixture.finish(a, b)
    }

    @Test func forceSendsNowWithoutStoring() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let result = try await sync.force("CreateNote", ["n": 99])
        #expect(result.data?["createNote"]?["n"] == 99)
        #expect(sync.pendingCount == 0)
        #expect(try fixture.server.appliedNumbers() == [99])
        await fixture.finish(sync)
    }
}

/// Batches, the completion-handler forms and the status stream.
@Suite(.timeLimit(.minutes(2))) struct DeliveryFormsTests {
    @Test func batchedDrainKeepsCallOrder() async throws {
        let fixture = try await SyncFixture.make(started: false)
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"),
            configuration: fixture.configuration { $0.batchSize = 8 })
        let requests = onStatus(sync) { statuses in
            var sizes: [Int] = []
            for await status in statuses {
                if case .sending(let ids)? = status.event { sizes.append(ids.count) }
                if status.event == .drained, status.pendingCount == 0, !sizes.isEmpty { break }
            }
            return sizes
        }
        for n in 1...30 {
            if n == 12 {
                try await sync.steady("CreateNote", ["n": "twelve"])  // refused inside its batch
            } else {
                try await sync.steady("CreateNote", ["n": n])
            }
        }
        try await fixture.server.start()
        sync.resume()
        try await sync.drain()
        #expect(try fixture.server.appliedNumbers() == Array(1...30).filter { $0 != 12 })
        #expect(try sync.failedItems().count == 1)
        #expect(await requests.value.contains(8))
        await fixture.finish(sync)
    }

    @Test func completionHandlerCallsKeepCallOrder() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let ids = GQLLocked<[Int64]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for n in 1...20 {
                sync.steady("CreateNote", ["n": n]) { id, error in
                    #expect(error == nil)
                    let count = ids.withLock { ids in
                        ids.append(id ?? -1)
                        return ids.count
                    }
                    if count == 20 { done.resume() }
                }
            }
        }
        #expect(ids.withLock { $0 } == ids.withLock { $0 }.sorted())
        let drained = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            sync.drain { done.resume(returning: $0) }
        }
        #expect(drained == nil)
        #expect(try fixture.server.appliedNumbers() == Array(1...20))
        let forced = await withCheckedContinuation { (done: CheckedContinuation<GQLResult?, Never>) in
            sync.force("CreateNote", ["n": 21]) { result, _ in done.resume(returning: result) }
        }
        #expect(forced?.data?["createNote"]?["n"] == 21)
        await fixture.finish(sync)
    }

    @Test func theStatusStreamTellsWhatHappened() async throws {
        let fixture = try await SyncFixture.make()
        let sync = try GQLSync(
            fixture.client, path: fixture.directory.path("outbox.sqlite"), configuration: fixture.configuration())
        let seen = watchStatus(sync, until: { $0.event == .drained && $0.sentCount == 2 })
        let first = try await sync.steady("CreateNote", ["n": 1])
        let second = try await sync.lazy("CreateNote", ["n": 2], "k")
        try await sync.drain()
        let events = await seen.value.compactMap(\.event)
        for event in [
            GQLSync.Event.queued(id: first, merged: false), .queued(id: second, merged: false),
            .sent(id: first, name: "CreateNote"), .sent(id: second, name: "CreateNote"),
        ] {
            #expect(events.contains(event))
        }
        try await sync.shutdown()
        var after = 0
        for await _ in sync.status { after += 1 }
        #expect(after == 1)  // the last status, then the end
        await fixture.finish()
    }
}
