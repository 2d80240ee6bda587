import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLDevServer

@Suite("Engine subscriptions", .timeLimit(.minutes(1)))
struct EngineSubscriptionTests {
    @Test func onCreateDeliversMutations() async throws {
        let fixture = try EngineFixture()
        let stream = try await fixture.subscribe("subscription { onCreateObjects { objectId text _version } }")
        async let events = collect(stream, count: 2)
        try await fixture.createObject(["objectId": "s1", "text": "one"])
        try await fixture.createObject(["objectId": "s2", "text": "two"])
        let received = try await events
        #expect(
            received == [
                ["data": ["onCreateObjects": ["objectId": "s1", "text": "one", "_version": 1]]],
                ["data": ["onCreateObjects": ["objectId": "s2", "text": "two", "_version": 1]]],
            ])
    }

    @Test("a mutation's event carries what the mutation answered, in commit order, even when the row changed since")
    func eventsCarryTheMutationsAnswers() async throws {
        let fixture = try EngineFixture()
        let created = try await fixture.subscribe("subscription { onCreateObjects { objectId text _version } }")
        let updated = try await fixture.subscribe("subscription { onUpdateObjects { objectId text _version } }")
        let deleted = try await fixture.subscribe("subscription { onDeleteObjects { objectId _deleted _version } }")
        async let createdEvents = collect(created, count: 1, timeout: .seconds(10))
        async let updatedEvents = collect(updated, count: 2, timeout: .seconds(10))
        async let deletedEvents = collect(deleted, count: 1, timeout: .seconds(10))
        // All four committed in one group (the queue's worker held until they are queued, in order): every row
        // read after that commit would show the deleted "third".
        let writes = fixture.engine.writes
        let gate = Gate()
        await writes.hold(gate)
        let mutations = [
            #"mutation { createObjects(input: {objectId: "e", text: "first"}) { objectId } }"#,
            #"mutation { updateObjects(input: {objectId: "e", text: "second"}) { objectId } }"#,
            #"mutation { updateObjects(input: {objectId: "e", text: "third"}) { objectId } }"#,
            #"mutation { deleteObjects(input: {objectId: "e"}) { objectId } }"#,
        ]
        var answers: [Task<GQLValue, Never>] = []
        for (n, mutation) in mutations.enumerated() {
            answers.append(Task { await fixture.run(mutation) })
            #expect(await waitUntil { writes.queued == n + 1 })
        }
        gate.release()
        for answer in answers { #expect(await answer.value["errors"] == nil) }
        #expect(
            try await createdEvents == [
                ["data": ["onCreateObjects": ["objectId": "e", "text": "first", "_version": 1]]]
            ])
        #expect(
            try await updatedEvents == [
                ["data": ["onUpdateObjects": ["objectId": "e", "text": "second", "_version": 2]]],
                ["data": ["onUpdateObjects": ["objectId": "e", "text": "third", "_version": 3]]],
            ])
        #expect(
            try await deletedEvents == [
                ["data": ["onDeleteObjects": ["objectId": "e", "_deleted": true, "_version": 4]]]
            ])
    }

    @Test func filterSelectsEvents() async throws {
        let fixture = try EngineFixture()
        let stream = try await fixture.subscribe(
            "subscription($f: ModelSubscriptionObjectsFilterInput) { onCreateObjects(filter: $f) { objectId number } }",
            ["f": ["or": [["number": ["gt": 10]], ["text": ["in": ["pick", "me"]]]]]])
        async let events = collect(stream, count: 2)
        try await fixture.createObject(["objectId": "low", "number": 1])
        try await fixture.createObject(["objectId": "high", "number": 11])
        try await fixture.createObject(["objectId": "other", "number": 2, "text": "nope"])
        try await fixture.createObject(["objectId": "named", "number": 3, "text": "me"])
        let received = try await events
        #expect(received.map { $0["data"]?["onCreateObjects"]?["objectId"] } == ["high", "named"])
    }

    @Test func directDatabaseWritesArePublished() async throws {
        let fixture = try EngineFixture()
        let created = try await fixture.subscribe(
            "subscription { onCreateObjects { objectId text _version _deleted } }")
        let updated = try await fixture.subscribe("subscription { onUpdateObjects { objectId text } }")
        async let createdEvents = collect(created, count: 1)
        async let updatedEvents = collect(updated, count: 1)
        try fixture.db.insert("Objects", ["objectId": "raw", "text": "plain insert"])
        // An event carries the row as it is when the event is read: let the insert's be read first.
        await fixture.db.observersIdle()
        try fixture.db.update("Objects", ["objectId": "raw", "text": "plain update"])
        #expect(
            try await createdEvents == [
                [
                    "data": [
                        "onCreateObjects": [
                            "objectId": "raw", "text": "plain insert", "_version": 1, "_deleted": false,
                        ]
                    ]
                ]
            ])
        #expect(
            try await updatedEvents == [["data": ["onUpdateObjects": ["objectId": "raw", "text": "plain update"]]]])
    }

    @Test func softAndHardDeletesAreDeleteEvents() async throws {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "x", "text": "soft"])
        try await fixture.createObject(["objectId": "y", "text": "hard"])
        try await fixture.createObject(["objectId": "z", "text": "marker"])
        let deletes = try await fixture.subscribe(
            "subscription { onDeleteObjects { objectId _deleted _version } }")
        let updates = try await fixture.subscribe("subscription { onUpdateObjects { objectId } }")
        async let deleteEvents = collect(deletes, count: 2)
        async let updateEvents = collect(updates, count: 1)
        _ = try await fixture.data(#"mutation { deleteObjects(input: {objectId: "x"}) { objectId } }"#)
        try fixture.db.delete("Objects", ["objectId": "y"])
        // A real update after the deletes: events come in commit order, so it is the first update event unless
        // a delete was published as an update too.
        _ = try await fixture.data(#"mutation { updateObjects(input: {objectId: "z", text: "m"}) { objectId } }"#)
        #expect(
            try await deleteEvents == [
                ["data": ["onDeleteObjects": ["objectId": "x", "_deleted": true, "_version": 2]]],
                // A hard delete has nothing left to read: a tombstone with version 0.
                ["data": ["onDeleteObjects": ["objectId": "y", "_deleted": true, "_version": 0]]],
            ])
        // The soft delete is an update of the row, but not an onUpdate event.
        #expect(try await updateEvents == [["data": ["onUpdateObjects": ["objectId": "z"]]]])
    }

    @Test func subscribersShareOneObserverAndTheLastOneRemovesIt() async throws {
        let fixture = try EngineFixture()
        #expect(fixture.db.observerCount == 0)
        var streams: [DevEngine.Events] = []
        for _ in 0..<5 {
            streams.append(try await fixture.subscribe("subscription { onUpdateObjects { objectId } }"))
        }
        streams.append(try await fixture.subscribe("subscription { onCreateObjects { objectId } }"))
        #expect(fixture.db.observerCount == 1)
        #expect(fixture.engine.subscriptionCount == 6)

        // collect() stops iterating after one event; releasing the stream then ends its subscription.
        try await fixture.createObject(["objectId": "shared"])
        let first = try await collect(streams.removeLast(), count: 1)
        #expect(first.first?["data"]?["onCreateObjects"]?["objectId"] == "shared")
        #expect(await fixture.waitForSubscriptions(5))
        #expect(fixture.db.observerCount == 1)

        // Every subscriber of a kind gets the event.
        let received = try await withThrowingTaskGroup(of: Int.self) { group in
            for stream in streams {
                group.addTask { try await collect(stream, count: 1).count }
            }
            streams.removeAll()
            _ = try await fixture.data(
                #"mutation { updateObjects(input: {objectId: "shared", text: "t"}) { objectId } }"#)
            return try await group.reduce(0, +)
        }
        #expect(received == 5)
        #expect(await fixture.waitForObservers(0))
        #expect(fixture.engine.subscriptionCount == 0)
    }

    @Test func cancellingTheConsumerEndsTheSubscription() async throws {
        let fixture = try EngineFixture()
        let stream = try await fixture.subscribe("subscription { onCreateObjects { objectId } }")
        #expect(fixture.db.observerCount == 1)
        let consumer = Task {
            var count = 0
            for try await _ in stream { count += 1 }
            return count
        }
        consumer.cancel()
        _ = try? await consumer.value
        #expect(await fixture.waitForObservers(0))
    }

    @Test func badSubscriptionFilterFailsAtOnce() async throws {
        let fixture = try EngineFixture()
        let outcome = await fixture.engine.subscribe(
            .init(query: #"subscription { onCreateObjects(filter: {number: {between: [1, 2, 3]}}) { objectId } }"#))
        guard case .failed(let response) = outcome else {
            Issue.record("a bad filter was accepted")
            return
        }
        #expect(response.errorMessages.first?.contains("two values") == true)
        #expect(fixture.db.observerCount == 0)
    }

    @Test func customModelSubscriptionUsesItsOwnTable() async throws {
        let fixture = try EngineFixture(
            sdl: "type Post @model { id: ID!, title: String }\ntype Box @model { id: ID!, size: Int }")
        let stream = try await fixture.subscribe("subscription { onCreateBox(filter: {size: {ge: 2}}) { id size } }")
        async let events = collect(stream, count: 1)
        _ = try await fixture.data(#"mutation { createPost(input: {id: "p", title: "not a box"}) { id } }"#)
        _ = try await fixture.data(#"mutation { createBox(input: {id: "b1", size: 1}) { id } }"#)
        _ = try await fixture.data(#"mutation { createBox(input: {id: "b2", size: 3}) { id } }"#)
        #expect(try await events == [["data": ["onCreateBox": ["id": "b2", "size": 3]]]])
        let boxes = try await fixture.data("{ listBoxes { items { id } } listPosts { items { id } } }")
        #expect(boxes["listBoxes"]?["items"]?.arrayValue?.count == 2)
        #expect(boxes["listPosts"]?["items"] == [["id": "p"]])
    }

    @Test func inMemoryDatabaseServesQueriesAndSubscriptions() async throws {
        let db = try GQLDatabase(path: ":memory:")
        let engine = try DevEngine(sdl: nil, database: db)
        guard
            case .stream(let stream) = await engine.subscribe(
                .init(query: "subscription { onCreateObjects { objectId } }"))
        else {
            Issue.record("subscription refused")
            return
        }
        async let events = collect(stream, count: 1)
        let create = #"mutation { createObjects(input: {objectId: "m"}) { objectId } }"#
        let created = await engine.execute(.init(query: create)).value
        #expect(created["data"]?["createObjects"]?["objectId"] == "m")
        #expect(try await events == [["data": ["onCreateObjects": ["objectId": "m"]]]])
        let listed = await engine.execute(.init(query: "{ listObjects { items { objectId } } }")).value
        #expect(listed["data"]?["listObjects"]?["items"] == [["objectId": "m"]])
    }

    @Test func finishSubscriptionsEndsEveryStream() async throws {
        let fixture = try EngineFixture()
        let first = try await fixture.subscribe("subscription { onCreateObjects { objectId } }")
        let second = try await fixture.subscribe("subscription { onDeleteObjects { objectId } }")
        // Read until each stream ends: only finishSubscriptions ends them (else the suite's time limit fails the test).
        func untilEnd(_ stream: DevEngine.Events) async throws -> [GQLValue] {
            var events: [GQLValue] = []
            for try await event in stream { events.append(event.value) }
            return events
        }
        async let firstEvents = untilEnd(first)
        async let secondEvents = untilEnd(second)
        try await fixture.createObject(["objectId": "last"])
        await fixture.db.observersIdle()
        fixture.engine.finishSubscriptions()
        // Both streams end normally, after the events already published.
        #expect(try await firstEvents == [["data": ["onCreateObjects": ["objectId": "last"]]]])
        #expect(try await secondEvents == [])
        #expect(await fixture.waitForObservers(0))
    }

    @Test func subscribersOfTheSameRequestShareOneExecutionPerEvent() async throws {
        let fixture = try EngineFixture()
        let query =
            "subscription ($filter: ModelSubscriptionObjectsFilterInput) { onCreateObjects(filter: $filter) { objectId } }"
        var same: [DevEngine.Events] = []
        for _ in 0..<20 { same.append(try await fixture.subscribe(query)) }
        var filtered = [try await fixture.subscribe(query, ["filter": ["objectId": ["eq": "b"]]])]
        // 21 subscribers, but only two GraphQL subscriptions run: one per distinct request.
        #expect(fixture.engine.subscriptionCount == 21)
        #expect(fixture.engine.hub.subscriberCount == 2)

        // The streams move into the collecting tasks, so each is released when its task is done.
        let everyone = try await withThrowingTaskGroup(of: [GQLValue].self) { group in
            for stream in same { group.addTask { try await collect(stream, count: 2) } }
            for stream in filtered { group.addTask { try await collect(stream, count: 1) } }
            same.removeAll()
            filtered.removeAll()
            try await fixture.createObject(["objectId": "a"])
            try await fixture.createObject(["objectId": "b"])
            return try await group.reduce(into: [[GQLValue]]()) { $0.append($1) }
        }
        let a: GQLValue = ["data": ["onCreateObjects": ["objectId": "a"]]]
        let b: GQLValue = ["data": ["onCreateObjects": ["objectId": "b"]]]
        #expect(everyone.filter { $0 == [a, b] }.count == 20)
        #expect(everyone.filter { $0 == [b] }.count == 1)
        #expect(await fixture.waitForSubscriptions(0))
        #expect(await fixture.waitForObservers(0))
    }
}
