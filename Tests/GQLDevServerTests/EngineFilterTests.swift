import Foundation
import Testing

@testable import GQLDevServer

@Suite("Engine filters, pagination and sync")
struct EngineFilterTests {
    /// Five items: a..e with numbers 1...5, texts, doubles, booleans; `e` has no text.
    private func seeded() async throws -> EngineFixture {
        let fixture = try EngineFixture()
        let rows: [GQLValues] = [
            ["objectId": "a", "text": "apple pie", "number": 1, "double": 0.5, "boolean": true],
            ["objectId": "b", "text": "banana", "number": 2, "double": 1.5, "boolean": false],
            ["objectId": "c", "text": "cherry pie", "number": 3, "double": 2.5, "boolean": true],
            ["objectId": "d", "text": "apricot", "number": 4, "double": 3.5, "boolean": false],
            ["objectId": "e", "number": 5, "double": 4.5],
        ]
        for row in rows { try await fixture.createObject(row) }
        return fixture
    }

    private func ids(_ fixture: EngineFixture, _ filter: String) async throws -> [String] {
        let data = try await fixture.data("{ listObjects(filter: \(filter)) { items { objectId } } }")
        return (data["listObjects"]?["items"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue }
    }

    @Test(arguments: [
        ("{number: {eq: 3}}", ["c"]),
        ("{number: {ne: 3}}", ["a", "b", "d", "e"]),
        ("{number: {gt: 3}}", ["d", "e"]),
        ("{number: {ge: 3}}", ["c", "d", "e"]),
        ("{number: {lt: 3}}", ["a", "b"]),
        ("{number: {le: 3}}", ["a", "b", "c"]),
        ("{number: {between: [2, 4]}}", ["b", "c", "d"]),
        ("{double: {gt: 2.0}}", ["c", "d", "e"]),
        ("{text: {contains: \"pie\"}}", ["a", "c"]),
        ("{text: {notContains: \"pie\"}}", ["b", "d", "e"]),
        ("{text: {beginsWith: \"ap\"}}", ["a", "d"]),
        ("{text: {eq: \"banana\"}}", ["b"]),
        ("{text: {ne: \"banana\"}}", ["a", "c", "d", "e"]),
        ("{text: {attributeExists: false}}", ["e"]),
        ("{text: {attributeExists: true}}", ["a", "b", "c", "d"]),
        ("{text: {between: [\"b\", \"c\"]}}", ["b"]),
        ("{boolean: {eq: true}}", ["a", "c"]),
        ("{boolean: {ne: true}}", ["b", "d", "e"]),
        ("{objectId: {gt: \"c\"}}", ["d", "e"]),
        ("{number: {gt: 1, lt: 4}}", ["b", "c"]),
        ("{number: {gt: 1}, boolean: {eq: true}}", ["c"]),
        ("{and: [{number: {gt: 1}}, {text: {contains: \"pie\"}}]}", ["c"]),
        ("{or: [{number: {eq: 1}}, {number: {eq: 5}}]}", ["a", "e"]),
        ("{not: {text: {contains: \"pie\"}}}", ["b", "d", "e"]),
        ("{not: {number: {gt: 2}}}", ["a", "b"]),
        (
            "{or: [{and: [{boolean: {eq: true}}, {number: {gt: 1}}]}, {not: {text: {attributeExists: true}}}]}",
            ["c", "e"]
        ),
        ("{_version: {eq: 1}}", ["a", "b", "c", "d", "e"]),
    ])
    func filterOperator(filter: String, expected: [String]) async throws {
        let fixture = try await seeded()
        #expect(try await ids(fixture, filter) == expected)
        // The same filter as a mutation condition is evaluated in Swift (as subscription filters are): it must
        // select the same items.
        guard !filter.contains("objectId") else { return }
        var matched: [String] = []
        for id in ["a", "b", "c", "d", "e"] {
            let response = await fixture.run(
                "mutation { updateObjects(input: {objectId: \"\(id)\"}, condition: \(filter)) { objectId } }")
            if response["errors"] == nil { matched.append(id) }
        }
        #expect(matched == expected)
    }

    @Test func inAndNotInMatchInSwift() throws {
        let model = try #require(try ModelParser.parse(ModelParser.defaultSDL).models.first)
        let codec = ModelCodec(model: model)
        let inFilter = try #require(try ModelFilter.parse(["number": ["in": [1, 3]]], codec: codec))
        let notInFilter = try #require(try ModelFilter.parse(["text": ["notIn": ["x", "y"]]], codec: codec))
        #expect(inFilter.matches(["number": 3]))
        #expect(!inFilter.matches(["number": 2]))
        #expect(!inFilter.matches(["number": nil]))
        #expect(notInFilter.matches(["text": "z"]))
        #expect(notInFilter.matches(["text": nil]))
        #expect(!notInFilter.matches(["text": "y"]))
        #expect(throws: ResolverError.self) { try ModelFilter.parse(["number": ["like": 1]], codec: codec) }
    }

    @Test func filterValuesAreBoundNotPasted() async throws {
        let fixture = try await seeded()
        #expect(try await ids(fixture, #"{text: {eq: "x' OR '1'='1"}}"#) == [])
        #expect(try await ids(fixture, #"{text: {contains: "%"}}"#) == [])
        #expect(try fixture.db.count("Objects") == 5)
    }

    @Test func badFiltersAreFieldErrors() async throws {
        let fixture = try await seeded()
        let between = await fixture.run("{ listObjects(filter: {number: {between: [1]}}) { items { objectId } } }")
        #expect(between.errorMessages.first?.contains("two values") == true)
        #expect(between["errors"]?[0]?["path"] == ["listObjects"])
        let unknown = await fixture.run("{ listObjects(filter: {colour: {eq: 1}}) { items { objectId } } }")
        #expect(unknown.errorMessages.first?.contains("colour") == true)
    }

    @Test func paginationWalksEveryPageOnce() async throws {
        let fixture = try await seeded()
        var seen: [String] = []
        var token: GQLValue = .null
        var pages = 0
        repeat {
            let data = try await fixture.data(
                "query($t: String) { listObjects(limit: 2, nextToken: $t) { items { objectId } nextToken } }",
                ["t": token])
            let page = try #require(data["listObjects"])
            seen += (page["items"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue }
            token = page["nextToken"] ?? .null
            pages += 1
        } while !token.isNull && pages < 10
        #expect(seen == ["a", "b", "c", "d", "e"])
        #expect(pages == 3)
    }

    @Test func paginationKeepsTheFilter() async throws {
        let fixture = try await seeded()
        let first = try await fixture.data(
            "{ listObjects(filter: {number: {ge: 2}}, limit: 2) { items { objectId } nextToken } }")
        let token = try #require(first["listObjects"]?["nextToken"]?.stringValue)
        let second = try await fixture.data(
            "query($t: String) { listObjects(filter: {number: {ge: 2}}, limit: 2, nextToken: $t) { items { objectId } nextToken } }",
            ["t": .string(token)])
        #expect(second["listObjects"]?["items"] == [["objectId": "d"], ["objectId": "e"]])
        #expect(second["listObjects"]?["nextToken"] == .null)
    }

    @Test func malformedTokensAndLimitsAreRejected() async throws {
        let fixture = try await seeded()
        for token in [
            "not base64!", Data("{\"x\":1}".utf8).base64EncodedString(),
            Data(#"{"v":1,"model":"Other","after":"a"}"#.utf8).base64EncodedString(),
        ] {
            let response = await fixture.run(
                "query($t: String) { listObjects(nextToken: $t) { items { objectId } } }", ["t": .string(token)])
            #expect(response.errorMessages.first?.contains("Invalid nextToken") == true, "\(token)")
            #expect(response["errors"]?[0]?["extensions"]?["errorType"] == "InvalidNextToken")
        }
        let zero = await fixture.run("{ listObjects(limit: 0) { items { objectId } } }")
        #expect(zero.errorMessages.first?.contains("limit") == true)
        let huge = try await fixture.data("{ listObjects(limit: 100000) { items { objectId } nextToken } }")
        #expect(huge["listObjects"]?["items"]?.arrayValue?.count == 5)
    }

    @Test func defaultLimitIs100() async throws {
        let fixture = try EngineFixture()
        try await fixture.db.write { tx in
            for i in 0..<105 { try tx.insert("Objects", ["objectId": String(format: "k%03d", i)]) }
        }
        let data = try await fixture.data("{ listObjects { items { objectId } nextToken } }")
        #expect(data["listObjects"]?["items"]?.arrayValue?.count == 100)
        #expect(data["listObjects"]?["nextToken"]?.stringValue != nil)
    }

    @Test func deltaSyncReturnsChangesSinceLastSyncIncludingDeletes() async throws {
        let fixture = try await seeded()
        let base = try await fixture.data("{ syncObjects { items { objectId } nextToken startedAt } }")
        #expect(base["syncObjects"]?["items"]?.arrayValue?.count == 5)
        let startedAt = try #require(base["syncObjects"]?["startedAt"]?.intValue)
        // Backdate the seeded rows so the delta below only sees what changes next.
        try await fixture.db.execute("UPDATE Objects SET _lastChangedAt = ?", [startedAt - 10_000])

        _ = try await fixture.data(#"mutation { updateObjects(input: {objectId: "b", text: "b2"}) { _version } }"#)
        _ = try await fixture.data(#"mutation { deleteObjects(input: {objectId: "d"}) { _version } }"#)
        let delta = try await fixture.data(
            "query($s: AWSTimestamp) { syncObjects(lastSync: $s) { items { objectId text _deleted _version } startedAt } }",
            ["s": .int(startedAt - 1)])
        #expect(
            delta["syncObjects"]?["items"] == [
                ["objectId": "b", "text": "b2", "_deleted": false, "_version": 2],
                ["objectId": "d", "text": "apricot", "_deleted": true, "_version": 2],
            ])
        #expect((delta["syncObjects"]?["startedAt"]?.intValue ?? 0) >= startedAt)
        // A full sync still has the deleted row; list does not.
        let all = try await fixture.data("{ syncObjects(filter: {_deleted: {eq: true}}) { items { objectId } } }")
        #expect(all["syncObjects"]?["items"] == [["objectId": "d"]])
        #expect(try await ids(fixture, "{}") == ["a", "b", "c", "e"])
    }
}
