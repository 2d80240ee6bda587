import Foundation
import Testing

@testable import GQLDevServer

@Suite("Engine operations")
struct EngineOperationTests {
    @Test func createGetUpdateDeleteRoundTrip() async throws {
        let fixture = try EngineFixture(clock: { Date(timeIntervalSince1970: 1_700_000_000.25) })
        let created = try await fixture.createObject(
            ["objectId": "o1", "text": "hello", "number": 42, "double": 1.5, "boolean": true])
        #expect(created["text"] == "hello")
        #expect(created["number"] == 42)
        #expect(created["double"] == 1.5)
        #expect(created["boolean"] == true)
        #expect(created["_version"] == 1)
        #expect(created["_deleted"] == false)
        let createdAt = try #require(created["createdAt"]?.stringValue)
        #expect((try? GQLDate.date(from: createdAt)) != nil)
        #expect(createdAt.hasSuffix("Z") && createdAt.count == 24)
        let changedAt = try #require(created["_lastChangedAt"]?.intValue)
        #expect(changedAt == 1_700_000_000_250)  // from the clock, not compared with the wall clock

        let fetched = try await fixture.data(
            "query($id: ID!) { getObjects(objectId: $id) { \(EngineFixture.objectFields) } }", ["id": "o1"])
        #expect(fetched["getObjects"] == created)

        let updated = try await fixture.data(
            """
            mutation { updateObjects(input: {objectId: "o1", text: "bye", number: null, _version: 1}) {
              objectId text number double _version } }
            """)
        #expect(
            updated["updateObjects"] == ["objectId": "o1", "text": "bye", "number": nil, "double": 1.5, "_version": 2])

        let deleted = try await fixture.data(
            #"mutation { deleteObjects(input: {objectId: "o1", _version: 2}) { objectId _deleted _version } }"#)
        #expect(deleted["deleteObjects"] == ["objectId": "o1", "_deleted": true, "_version": 3])

        // get still returns the soft-deleted item; list leaves it out.
        let after = try await fixture.data(
            #"{ getObjects(objectId: "o1") { _deleted } listObjects { items { objectId } } }"#)
        #expect(after["getObjects"]?["_deleted"] == true)
        #expect(after["listObjects"]?["items"] == [])
        // The row is still in the table, marked deleted.
        let rows = try fixture.db.fetchAll("Objects")
        #expect(rows.count == 1)
        #expect(rows.first?["_deleted"] == true)
    }

    @Test func getOfAMissingKeyIsNull() async throws {
        let fixture = try EngineFixture()
        let data = try await fixture.data(#"{ getObjects(objectId: "nope") { objectId } }"#)
        #expect(data["getObjects"] == .null)
    }

    @Test func createWithoutKeyGeneratesAUUID() async throws {
        let fixture = try EngineFixture()
        let first = try await fixture.createObject(["text": "a"])
        let second = try await fixture.createObject(["text": "b"])
        let id = try #require(first["objectId"]?.stringValue)
        #expect(UUID(uuidString: id) != nil)
        #expect(first["objectId"] != second["objectId"])
        #expect(try fixture.db.count("Objects") == 2)
    }

    @Test func createWithAnExistingKeyFails() async throws {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "dup", "text": "first"])
        let response = await fixture.run(
            #"mutation { createObjects(input: {objectId: "dup", text: "second"}) { objectId } }"#)
        #expect(response["data"]?["createObjects"] == .null)
        let error = try #require(response["errors"]?[0])
        #expect(error["message"]?.stringValue?.contains("already exists") == true)
        #expect(error["path"] == ["createObjects"])
        #expect(error["extensions"]?["errorType"] == "DynamoDB:ConditionalCheckFailedException")
        #expect(try fixture.db.fetchOne("Objects", key: "dup")?["text"] == "first")
    }

    @Test func updateOfAMissingItemFails() async throws {
        let fixture = try EngineFixture()
        let response = await fixture.run(
            #"mutation { updateObjects(input: {objectId: "ghost", text: "x"}) { objectId } }"#)
        #expect(response["errors"]?[0]?["message"]?.stringValue?.contains("no Objects with objectId") == true)
        #expect(try fixture.db.count("Objects") == 0)
    }

    @Test func mutationConditionIsChecked() async throws {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "c", "number": 5])
        let refused = await fixture.run(
            #"mutation { updateObjects(input: {objectId: "c", text: "x"}, condition: {number: {gt: 10}}) { text } }"#)
        #expect(refused["errors"]?[0]?["extensions"]?["errorType"] == "DynamoDB:ConditionalCheckFailedException")
        let accepted = try await fixture.data(
            #"mutation { updateObjects(input: {objectId: "c", text: "x"}, condition: {number: {lt: 10}}) { text } }"#)
        #expect(accepted["updateObjects"]?["text"] == "x")
    }

    @Test func prepareTellsTheKindOfTheSelectedOperationOrWhyNone() throws {
        let engine = try EngineFixture().engine
        func kind(_ query: String, _ name: String? = nil) -> DevEngine.OperationKind? {
            try? engine.prepare(.init(query: query, operationName: name)).get().kind
        }
        func refusal(_ query: String, _ name: String? = nil) -> DevEngine.Refusal? {
            if case .failure(let refusal) = engine.prepare(.init(query: query, operationName: name)) { return refusal }
            return nil
        }
        #expect(kind("{ listObjects { nextToken } }") == .query)
        #expect(kind("mutation M { deleteObjects(input: {objectId: \"x\"}) { objectId } }") == .mutation)
        #expect(kind("subscription { onCreateObjects { objectId } }") == .subscription)
        let two = "query A { listObjects { nextToken } } subscription B { onCreateObjects { objectId } }"
        #expect(kind(two, "B") == .subscription)
        #expect(refusal(two)?.reason == .unparsable)
        #expect(refusal(two, "C")?.reason == .unparsable)
        #expect(refusal("{ broken")?.reason == .unparsable)
        #expect(refusal("fragment F on Objects { text }")?.reason == .invalid)  // an unused fragment, no operation
        let invalid = try #require(refusal("subscription { nope }"))
        #expect(invalid.reason == .invalid && invalid.kind == .subscription)
        // A cached document answers the second time from the cache, with the same verdict.
        #expect(kind("{ listObjects { nextToken } }") == .query)
    }

    @Test("query texts that differ only in their Unicode encoding are two documents, each answered for itself")
    func queryTextsAreKeyedByTheirBytes() async throws {
        let fixture = try EngineFixture()
        // `é` precomposed (U+00E9) and decomposed (e + U+0301): equal as `String`s, two ids to the store.
        try await fixture.createObject(["objectId": "\u{E9}", "text": "precomposed"])
        try await fixture.createObject(["objectId": "e\u{301}", "text": "decomposed"])
        for (id, text) in [("\u{E9}", "precomposed"), ("e\u{301}", "decomposed"), ("\u{E9}", "precomposed")] {
            let literal = try await fixture.data("{ getObjects(objectId: \"\(id)\") { objectId text } }")
            #expect(literal["getObjects"]?["text"] == .string(text), "literal id \(Array(id.unicodeScalars))")
            let operation = try await fixture.data(
                "query Get { getObjects(objectId: \"\(id)\") { text } }", [:])
            #expect(operation["getObjects"]?["text"] == .string(text), "named, id \(Array(id.unicodeScalars))")
        }
        // Each of the four texts is in the cache, an entry each.
        #expect(fixture.engine.documents.withLock { $0.keys.count(where: { $0.text.contains("getObjects") }) } == 4)
    }

    @Test func operationNameSelectsWhatRuns() async throws {
        let fixture = try EngineFixture()
        let document = """
            mutation Make { createObjects(input: {objectId: "n1"}) { objectId } }
            query Read { getObjects(objectId: "n1") { objectId } }
            """
        let ambiguous = await fixture.run(document)
        #expect(ambiguous["errors"] != nil && ambiguous["data"] == nil)
        let made = await fixture.run(document, operationName: "Make")
        #expect(made["data"]?["createObjects"]?["objectId"] == "n1")
        let read = await fixture.run(document, operationName: "Read")
        #expect(read["data"]?["getObjects"]?["objectId"] == "n1")
        let unknown = await fixture.run(document, operationName: "Other")
        #expect(unknown.errorMessages.first?.contains("Other") == true)
    }

    @Test func malformedDocumentsAreErrorsNotThrows() async throws {
        let fixture = try EngineFixture()
        let syntax = await fixture.run("{ listObjects { items { objectId }")
        #expect(syntax["data"] == nil)
        #expect(syntax.errorMessages.first?.contains("Syntax Error") == true)
        #expect(syntax["errors"]?[0]?["locations"]?[0]?["line"] == 1)

        let unknownField = await fixture.run("{ listObjects { items { colour } } }")
        #expect(unknownField.errorMessages.first?.contains("colour") == true)
        let unknownType = await fixture.run("{ getWidget(id: \"1\") { id } }")
        #expect(unknownType.errorMessages.first?.contains("getWidget") == true)
        let empty = await fixture.run("")
        #expect(!empty.errorMessages.isEmpty)
    }

    @Test func badVariablesAreErrors() async throws {
        let fixture = try EngineFixture()
        let query = "query($id: ID!) { getObjects(objectId: $id) { objectId } }"
        let missing = await fixture.run(query)
        #expect(missing.errorMessages.first?.contains("$id") == true)
        let wrongType = await fixture.run(
            "mutation($n: Int) { createObjects(input: {number: $n}) { objectId } }", ["n": "many"])
        #expect(!wrongType.errorMessages.isEmpty)
        #expect(try fixture.db.count("Objects") == 0)
        let badInput = await fixture.run(
            "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
            ["input": ["colour": "red"]])
        #expect(badInput.errorMessages.first?.contains("colour") == true)
    }

    @Test func executeRefusesSubscriptionsAndSubscribeRefusesQueries() async throws {
        let fixture = try EngineFixture()
        let response = await fixture.run("subscription { onCreateObjects { objectId } }")
        #expect(response["data"] == nil)
        #expect(response["errors"]?[0]?["extensions"]?["errorType"] == "UnsupportedOperation")
        guard case .failed(let failed) = await fixture.engine.subscribe(.init(query: "{ listObjects { nextToken } }"))
        else {
            Issue.record("a query was accepted as a subscription")
            return
        }
        #expect(failed.errorMessages.first?.contains("not a subscription") == true)
        guard case .failed(let invalid) = await fixture.engine.subscribe(.init(query: "subscription { nope }")) else {
            Issue.record("an invalid subscription was accepted")
            return
        }
        #expect(invalid.errorMessages.first?.contains("nope") == true)
        #expect(fixture.db.observerCount == 0)
    }

    @Test func repeatedDocumentsGiveTheSameAnswers() async throws {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "r"])
        for _ in 0..<3 {
            let data = try await fixture.data(#"{ getObjects(objectId: "r") { objectId } }"#)
            #expect(data["getObjects"]?["objectId"] == "r")
        }
    }
}
