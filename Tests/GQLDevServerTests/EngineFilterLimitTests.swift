import GQLCore
import Testing

@testable import GQLDevServer

/// Large filters (issue 10): within the limits the SQL built from them holds; over them they are refused with a
/// filter-limit error before any SQL is built.
@Suite("Engine filters at their limits")
struct EngineFilterLimitTests {
    static let list =
        "query($f: ModelObjectsFilterInput) { listObjects(filter: $f, limit: 1000) { items { objectId } } }"

    /// The objectIds a filter selects.
    static func ids(_ fixture: EngineFixture, _ filter: GQLValue) async throws -> [String] {
        let data = try await fixture.data(list, ["f": filter])
        return (data["listObjects"]?["items"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue }
    }

    @Test func nineHundredNinetyNineOrTermsBuildSQLThatHolds() async throws {
        let fixture = try EngineFixture()
        for number in [3, 500, 998, 2000] {
            try await fixture.createObject(["objectId": .string("n\(number)"), "number": .int(Int64(number))])
        }
        let terms = (0..<999).map { GQLValue.object(["number": ["eq": .int(Int64($0))]]) }
        #expect(try await Self.ids(fixture, ["or": .array(terms)]) == ["n3", "n500", "n998"])
        let all = (0..<999).map { GQLValue.object(["number": ["ne": .int(Int64($0))]]) }
        #expect(try await Self.ids(fixture, ["and": .array(all)]) == ["n2000"])
    }

    @Test func notNestedFiftyDeepHoldsWhenTheDepthLimitAllowsIt() async throws {
        var limits = GQLDevServer.Limits()
        limits.maxValueDepth = 120
        let fixture = try EngineFixture(limits: limits)
        try await fixture.createObject(["objectId": "a", "text": "x"])
        try await fixture.createObject(["objectId": "b", "text": "y"])
        for depth in [49, 50] {
            var filter: GQLValue = ["text": ["eq": "x"]]
            for _ in 0..<depth { filter = ["not": filter] }
            #expect(try await Self.ids(fixture, filter) == (depth % 2 == 0 ? ["a"] : ["b"]), "not × \(depth)")
        }
    }

    @Test func aFilterOverTheTermLimitIsRefusedBeforeSQL() async throws {
        let fixture = try EngineFixture()
        let terms = (0..<1_001).map { GQLValue.object(["number": ["eq": .int(Int64($0))]]) }
        let response = await fixture.run(Self.list, ["f": ["or": .array(terms)]])
        #expect(response["errors"]?[0]?["extensions"]?["code"] == "FILTER_LIMIT_EXCEEDED")
        #expect(response["errors"]?[0]?["path"] == ["listObjects"])
    }
}
