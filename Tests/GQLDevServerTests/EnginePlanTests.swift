import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// The compiled plans (``OperationPlan``) answer every request exactly as GraphQLSwift's executor does: the same
/// bytes, `data` in selection order, the same errors, the same rows written.
@Suite("GQLDevServer's compiled plans", .timeLimit(.minutes(2)))
struct EnginePlanTests {
    static let create =
        "mutation C($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text number double boolean _version } }"
    static let get =
        "query G($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean _version _deleted } }"

    @Test("the corpus: gets, creates, updates, deletes, aliases, __typename, errors, variables right and wrong")
    func corpusAnswersAlike() async throws {
        var pair = try PlanDifferential()
        let seed: GQLValues = ["objectId": "seed-1", "text": "benchmark", "number": 1, "double": 2.5, "boolean": true]
        await pair.expectSame(Self.create, ["input": .object(seed)], planned: true)
        await pair.expectSame(Self.create, ["input": .object(seed)], planned: true)  // already exists
        await pair.expectSame(
            #"mutation { createObjects(input: {objectId: "lit", text: "a\"b", number: 7, double: 2, boolean: false}) { objectId double text } }"#,
            planned: true)
        await pair.expectSame(Self.create, ["input": ["objectId": .int(42), "text": "int id"]], planned: true)
        await pair.expectSame(Self.create, [:], planned: false)  // missing variable: the executor's error
        await pair.expectSame(Self.create, ["input": ["objectId": "u", "nope": 1]], planned: false)
        await pair.expectSame(Self.create, ["input": ["objectId": "u", "number": "abc"]], planned: false)
        await pair.expectSame(Self.create, ["input": ["objectId": "u", "number": .int(3_000_000_000)]], planned: false)
        for id: GQLValue in ["seed-1", "missing", .int(42), "lit"] {
            await pair.expectSame(Self.get, ["id": id], planned: true)
        }
        await pair.expectSame(Self.get, [:], planned: false)
        await pair.expectSame(Self.get, ["id": .bool(true)], planned: false)
        await pair.expectSame(Self.get, ["id": .null], planned: false)
        await pair.expectSame(
            #"{ getObjects(objectId: "seed-1") { __typename t: text objectId text n: number } }"#, planned: true)
        await pair.expectSame(#"query($id: ID = "seed-1") { getObjects(objectId: $id) { objectId } }"#, planned: true)
        await pair.expectSame(#"query($id: ID = "seed-1") { getObjects(objectId: $id) { objectId } }"#, ["id": .null])
        await pair.expectSame(
            #"query($a: ID!) { __typename first: getObjects(objectId: $a) { text } second: getObjects(objectId: "lit") { text objectId } }"#,
            ["a": "seed-1", "other": 5], planned: true)
        await pair.expectSame(
            #"query($a: ID!, $b: ID!) { a: getObjects(objectId: $a) { text } b: getObjects(objectId: $b) { text } }"#,
            ["a": "seed-1", "b": 1.5], planned: false)
        // Conflicts, conditions, deleted items, several mutations in order.
        let update =
            "mutation U($input: UpdateObjectsInput!, $c: ModelObjectsConditionInput) { updateObjects(input: $input, condition: $c) { objectId text _version } }"
        await pair.expectSame(update, ["input": ["objectId": "seed-1", "text": "v2", "_version": 1]], planned: true)
        await pair.expectSame(update, ["input": ["objectId": "seed-1", "text": "stale", "_version": 1]], planned: true)
        await pair.expectSame(
            update, ["input": ["objectId": "seed-1", "text": "c"], "c": ["text": ["eq": "nope"]]], planned: true)
        await pair.expectSame(
            update, ["input": ["objectId": "seed-1", "text": "c"], "c": ["text": ["eq": "v2"]]], planned: true)
        await pair.expectSame(
            update, ["input": ["objectId": "seed-1"], "c": ["number": ["between": [0, 5]]]], planned: true)
        await pair.expectSame(
            update, ["input": ["objectId": "seed-1"], "c": ["number": ["between": 1]]], planned: true)
        await pair.expectSame(update, ["input": ["objectId": "absent", "text": "x"]], planned: true)
        await pair.expectSame(
            #"mutation { a: createObjects(input: {objectId: "two"}) { objectId } b: updateObjects(input: {objectId: "two", text: "t"}, condition: {text: {attributeExists: false}}) { text _version } c: deleteObjects(input: {objectId: "two"}) { _deleted } d: deleteObjects(input: {objectId: "two"}) { _deleted } }"#,
            planned: true)
        await pair.expectSame(#"{ getObjects(objectId: "two") { objectId _deleted _version } }"#, planned: true)
        await pair.expectSame(Self.get, ["id": "seed-1"], style: .appSync, planned: true)
        await pair.expectSame(update, ["input": ["objectId": "seed-1", "_version": 9]], style: .appSync, planned: true)
        // The response budget, and operations that stay with the executor (still in selection order).
        await pair.expectSame(Self.get, ["id": "seed-1"], budget: 20, planned: true)
        await pair.expectSame(#"{ getObjects(objectId: "seed-1") { ...F } } fragment F on Objects { text objectId }"#)
        await pair.expectSame(#"{ getObjects(objectId: "seed-1") { text @include(if: true) objectId } }"#)
        await pair.expectSame(
            #"{ listObjects(limit: 2) { items { text objectId } nextToken } getObjects(objectId: "x") { text } }"#)
        #expect(pair.plannedRuns > 30)
    }

    @Test("pages: listObjects and syncObjects with filters, limits, tokens, aliases, __typename, errors")
    func pagesAnswerAlike() async throws {
        var pair = try PlanDifferential()
        for n in 0..<7 {
            let input: GQLValues = [
                "objectId": .string("p\(n)"), "text": n % 2 == 0 ? "even" : "odd", "number": .int(Int64(n)),
            ]
            await pair.expectSame(Self.create, ["input": .object(input)], planned: true)
        }
        let list =
            "query L($f: ModelObjectsFilterInput, $n: Int, $t: String) { listObjects(filter: $f, limit: $n, nextToken: $t) { __typename items { objectId text n: number __typename } nextToken } }"
        let first = await pair.expectSame(list, ["n": 3], planned: true)
        let token = try GQLValue(json: first)["data"]?["listObjects"]?["nextToken"]
        #expect(token?.stringValue != nil)
        await pair.expectSame(list, ["n": 3, "t": token ?? .null], planned: true)
        await pair.expectSame(list, ["f": ["text": ["eq": "even"]]], planned: true)
        await pair.expectSame(
            list, ["f": ["or": [["number": ["lt": 2]], ["number": ["between": [5, 6]]]]]], planned: true)
        await pair.expectSame(list, ["f": ["not": ["text": ["beginsWith": "ev"]]], "n": 2], planned: true)
        await pair.expectSame(list, ["f": ["and": ["number": ["ge": 1]]]], planned: true)  // a list of one
        await pair.expectSame(list, ["n": 0], planned: true)
        await pair.expectSame(list, ["t": "not a token"], planned: true)
        await pair.expectSame(list, ["f": ["nope": 1]], planned: false)
        await pair.expectSame(list, ["n": "3"], planned: false)
        await pair.expectSame(list, ["n": 5], budget: 300, planned: true)
        await pair.expectSame(
            #"{ listObjects(limit: 2, filter: {number: {gt: 2}}) { more: nextToken page: items { text objectId } } }"#,
            planned: true)
        await pair.expectSame(
            "query($s: AWSTimestamp) { syncObjects(lastSync: $s, limit: 4) { startedAt items { objectId _deleted _lastChangedAt } nextToken } }",
            ["s": 0], planned: true)
        await pair.expectSame(
            #"mutation { deleteObjects(input: {objectId: "p1"}) { objectId } }"#, planned: true)
        await pair.expectSame(
            "{ syncObjects { items { objectId _deleted } } listObjects { items { objectId } } }", planned: true)
        await pair.expectSame("{ listObjects { items { objectId } items { text } } }")
        await pair.expectSame("{ listObjects(limit: 2) { items { objectId } } }", style: .appSync, planned: true)
        try pair.sql("UPDATE Objects SET number = 'abc' WHERE objectId = 'p2'")
        await pair.expectSame("{ listObjects(limit: 3) { items { objectId number _version } } }", planned: true)
        // An item whose non-null field fails is null in its place, with the error (the spec's rule). GraphQLSwift
        // 4.3.0's executor drops such items from the list and then fails the whole response with a MapError; the
        // plan answers as the spec says.
        try pair.sql("UPDATE Objects SET _version = 'x' WHERE objectId = 'p3'")
        let outcome = await pair.run("{ listObjects(limit: 3) { items { objectId _version } } }")
        #expect(outcome.usedPlan)
        #expect(
            outcome.planned
                == #"{"data":{"listObjects":{"items":[{"objectId":"p0","_version":1},{"objectId":"p2","_version":1},null]}},"#
                + #""errors":[{"message":"Int cannot represent non-integer value: x"}]}"#)
        #expect(outcome.executed.contains("MapError"))
    }

    @Test("stored values the schema's scalars refuse or convert: the same errors and nulls")
    func oddStoredValuesAnswerAlike() async throws {
        var pair = try PlanDifferential()
        for id in ["odd", "big", "version", "text"] {
            await pair.expectSame(
                Self.create, ["input": ["objectId": .string(id), "text": "x", "number": 1]], planned: true)
        }
        try pair.sql("UPDATE Objects SET number = 'abc', double = '1.5', boolean = 'yes' WHERE objectId = 'odd'")
        try pair.sql("UPDATE Objects SET number = 3000000000, double = 7 WHERE objectId = 'big'")
        try pair.sql("UPDATE Objects SET _version = 'x' WHERE objectId = 'version'")
        try pair.sql("UPDATE Objects SET text = 12, number = 2.75 WHERE objectId = 'text'")
        for id in ["odd", "big", "version", "text"] {
            await pair.expectSame(Self.get, ["id": .string(id)], planned: true)
            await pair.expectSame(Self.get, ["id": .string(id)], style: .appSync, planned: true)
        }
        let update =
            "mutation($input: UpdateObjectsInput!) { updateObjects(input: $input) { objectId number _version } }"
        await pair.expectSame(update, ["input": ["objectId": "odd", "text": "y"]], planned: true)
    }

    @Test("every scalar kind of a custom model; list and enum fields stay with the executor")
    func customModelAnswersAlike() async throws {
        var pair = try PlanDifferential(sdl: PlanDifferential.sdl)
        let create =
            "mutation($input: CreateItemInput!) { createItem(input: $input) { id name count ratio flag stamp meta when required } }"
        let input: GQLValues = [
            "id": "i1", "name": "n", "count": 3, "ratio": 0.5, "flag": false, "stamp": 1_700_000_000_000,
            "meta": #"{"a":1}"#, "when": "2024-01-01T00:00:00.000Z", "required": "r",
        ]
        await pair.expectSame(create, ["input": .object(input)], planned: true)
        await pair.expectSame(create, ["input": ["id": "i2", "required": .null]], planned: false)
        await pair.expectSame(create, ["input": ["id": "i3"]], planned: false)
        await pair.expectSame(create, ["input": ["id": "i4", "required": "r", "size": "SMALL"]], planned: false)
        await pair.expectSame(#"{ getItem(id: "i1") { required id meta stamp ratio count } }"#, planned: true)
        await pair.expectSame(#"{ getItem(id: "i1") { id tags size } }"#)
        try pair.sql("UPDATE Item SET required = NULL WHERE id = 'i1'")
        await pair.expectSame(#"{ getItem(id: "i1") { id name required } }"#, planned: true)
    }

    @Test("generated requests over the default model answer alike", arguments: [UInt64(1), 2, 3])
    func generatedRequestsAnswerAlike(seed: UInt64) async throws {
        var pair = try PlanDifferential()
        await pair.expectSame(Self.create, ["input": ["objectId": "seed-1", "text": "t", "number": 1]])
        await pair.expectSame(Self.create, ["input": ["objectId": "seed-2"]])
        var generator = PlanCorpusGenerator(seed: seed)
        for n in 0..<150 {
            let (query, variables) = generator.request(n)
            await pair.expectSame(query, variables)
        }
        #expect(pair.plannedRuns - pair.fallbacks > 75, "plans ran \(pair.plannedRuns), fell back \(pair.fallbacks)")
    }

    @Test("a response lists data's members in selection order, on the plan and on the executor")
    func responsesFollowSelectionOrder() async throws {
        let fixture = try EngineFixture()
        try await fixture.createObject(["objectId": "o", "text": "t", "number": 5])
        let planned = await fixture.engine.execute(
            .init(query: #"{ getObjects(objectId: "o") { text z: number objectId } }"#))
        #expect(planned.json == #"{"data":{"getObjects":{"text":"t","z":5,"objectId":"o"}}}"#)
        let executed = await fixture.engine.execute(
            .init(query: #"{ getObjects(objectId: "o") { ... on Objects { text z: number objectId } } }"#))
        #expect(executed.json == planned.json)
        let events = try await fixture.subscribe("subscription { onCreateObjects { text objectId } }")
        try await fixture.createObject(["objectId": "s", "text": "u"])
        var iterator = events.makeAsyncIterator()
        let event = try await iterator.next()
        #expect(event?.json == #"{"data":{"onCreateObjects":{"text":"u","objectId":"s"}}}"#)
    }
}
