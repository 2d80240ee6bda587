import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// Documents sent to crash, hang or exhaust the server (issue 10), each refused with a GraphQL error whose
/// `extensions.code` names the limit, before GraphQLSwift's parser, validator or printer could be reached; after
/// each, the server still answers.
@Suite("GQLDevServer refuses hostile documents", .timeLimit(.minutes(2)))
struct HostileDocumentTests {
    /// `{a{a{…}}}` nested `depth` deep.
    static func nestedSelection(_ depth: Int) -> String {
        String(repeating: "{a", count: depth) + String(repeating: "}", count: depth)
    }

    /// A list literal nested `depth` deep around 1.
    static func nestedList(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
    }

    /// POSTs `query` and expects HTTP 400 with `code`, then checks the server still runs a query.
    static func expectRefused(
        _ endpoint: String, _ query: String, variables: GQLValues = [:], code: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let outcome = try await post(endpoint, ["query": .string(query), "variables": .object(variables)])
        #expect(
            outcome.status == 400, "status \(outcome.status): \(String(describing: outcome.json))",
            sourceLocation: sourceLocation)
        #expect(
            outcome.json?["errors"]?[0]?["extensions"]?["code"] == .string(code), "\(String(describing: outcome.json))",
            sourceLocation: sourceLocation)
        try await expectAnswering(endpoint, sourceLocation: sourceLocation)
    }

    /// The server still runs a plain query.
    static func expectAnswering(_ endpoint: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let after = try await post(endpoint, ["query": .string(ObjectsAPI.list)])
        #expect(after.status == 200 && after.json?["data"] != nil, sourceLocation: sourceLocation)
    }

    @Test("a selection set 850 deep, and 100,000 deep, is refused before parsing")
    func deepSelection() async throws {
        try await withDevServer { _, endpoints in
            try await Self.expectRefused(endpoints.http, Self.nestedSelection(850), code: "DEPTH_LIMIT_EXCEEDED")
            try await Self.expectRefused(endpoints.http, Self.nestedSelection(100_000), code: "DEPTH_LIMIT_EXCEEDED")
            // Just inside the text nesting but over the selection depth: refused on the parsed document.
            try await Self.expectRefused(endpoints.http, Self.nestedSelection(40), code: "DEPTH_LIMIT_EXCEEDED")
        }
    }

    @Test("list literals 70 and 10,000 deep, in arguments, filters and variable defaults, are refused at once")
    func deepValues() async throws {
        try await withDevServer { _, endpoints in
            let http = endpoints.http
            let seventy = Self.nestedList(70)
            try await Self.expectRefused(
                http, "{ listObjects(limit: \(seventy)) { items { objectId } } }", code: "VALUE_DEPTH_LIMIT_EXCEEDED")
            try await Self.expectRefused(
                http, "{ listObjects(filter: {number: {between: \(seventy)}}) { items { objectId } } }",
                code: "VALUE_DEPTH_LIMIT_EXCEEDED")
            try await Self.expectRefused(
                http, "query($v: Int = \(seventy)) { listObjects(limit: $v) { items { objectId } } }",
                code: "VALUE_DEPTH_LIMIT_EXCEEDED")
            try await Self.expectRefused(
                http, "{ listObjects(limit: \(Self.nestedList(10_000))) { items { objectId } } }",
                code: "DEPTH_LIMIT_EXCEEDED")
            let nots =
                String(repeating: "{not: ", count: 10_000) + "{text: {eq: \"a\"}}"
                + String(repeating: "}", count: 10_000)
            try await Self.expectRefused(
                http, "{ listObjects(filter: \(nots)) { items { objectId } } }", code: "DEPTH_LIMIT_EXCEEDED")
            // The same depth as a variable: the JSON parser stops at 512, the limit well before.
            let deepJSON = try GQLValue(json: Self.nestedList(40))
            try await Self.expectRefused(
                http, "query($f: ModelObjectsFilterInput) { listObjects(filter: $f) { items { objectId } } }",
                variables: ["f": ["number": ["in": deepJSON]]], code: "VALUE_DEPTH_LIMIT_EXCEEDED")
        }
    }

    @Test("100 aliases of listObjects(limit: 1000) are refused by the cost estimate")
    func aliasCost() async throws {
        try await withDevServer { _, endpoints in
            let aliases = (0..<100).map { "a\($0): listObjects(limit: 1000) { items { objectId } }" }
            try await Self.expectRefused(
                endpoints.http, "{ " + aliases.joined(separator: " ") + " }", code: "COST_LIMIT_EXCEEDED")
            // A variable limit that is not given counts as the largest page.
            let variable = (0..<30).map { "a\($0): listObjects(limit: $n) { items { objectId text } }" }
            try await Self.expectRefused(
                endpoints.http, "query($n: Int) { " + variable.joined(separator: " ") + " }",
                code: "COST_LIMIT_EXCEEDED")
            let many = (0..<201).map { "g\($0): getObjects(objectId: \"x\") { objectId }" }
            try await Self.expectRefused(
                endpoints.http, "{ " + many.joined(separator: " ") + " }", code: "ALIAS_LIMIT_EXCEEDED")
        }
    }

    @Test("fragments that multiply selections, and documents of too many tokens, are refused")
    func fragmentsAndTokens() async throws {
        try await withDevServer { _, endpoints in
            // F0 selects F1 twice, F1 selects F2 twice, …: 2^20 fields from a few hundred bytes.
            var fragments = ["fragment F20 on Objects { objectId }"]
            for level in 0..<20 {
                fragments.append("fragment F\(level) on Objects { ...F\(level + 1) ...F\(level + 1) }")
            }
            let fanOut = "{ getObjects(objectId: \"x\") { ...F0 } } " + fragments.joined(separator: " ")
            try await Self.expectRefused(endpoints.http, fanOut, code: "SELECTION_LIMIT_EXCEEDED")
            // A chain of 40 fragments, each spreading the next: 40 levels deep though no brace nests.
            var chain = ["fragment C40 on Objects { objectId }"]
            for level in 0..<40 { chain.append("fragment C\(level) on Objects { ...C\(level + 1) }") }
            let deep = "{ getObjects(objectId: \"x\") { ...C0 } } " + chain.joined(separator: " ")
            try await Self.expectRefused(endpoints.http, deep, code: "DEPTH_LIMIT_EXCEEDED")
            let tokens = "{ " + String(repeating: "objectId ", count: 60_000) + "}"
            try await Self.expectRefused(endpoints.http, tokens, code: "TOKEN_LIMIT_EXCEEDED")
        }
    }

    @Test("a batch over the operation limit is refused whole, before any of it runs")
    func batchLimit() async throws {
        try await withDevServer { _, endpoints in
            let batch = (0..<101).map { ObjectsAPI.createRequest("b\($0)", "batched") }
            let outcome = try await post(endpoints.http, .array(batch))
            #expect(outcome.status == 400)
            #expect(outcome.json?["errors"]?[0]?["extensions"]?["code"] == "BATCH_LIMIT_EXCEEDED")
            let list = try await post(endpoints.http, ["query": .string(ObjectsAPI.list)])
            #expect(list.json == ObjectsAPI.listed([]))
            // A batch whose parts each pass but whose sum is over the cost: nothing runs.
            let costly = (0..<30).map { _ -> GQLValue in
                ["query": "{ listObjects(limit: 1000) { items { objectId text number double } } }"]
            }
            let summed = try await post(endpoints.http, .array(costly + [ObjectsAPI.createRequest("c", "x")]))
            #expect(summed.status == 400)
            #expect(summed.json?["errors"]?[0]?["extensions"]?["code"] == "COST_LIMIT_EXCEEDED")
            #expect(try await post(endpoints.http, ["query": .string(ObjectsAPI.list)]).json == ObjectsAPI.listed([]))
        }
    }

    @Test("a response over the size limit stops with RESPONSE_TOO_LARGE")
    func responseSize() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.maxResponseBytes = 20_000
        try await withDevServer(configuration) { _, endpoints in
            let text = String(repeating: "x", count: 1_000)
            for index in 0..<30 {
                _ = try await post(endpoints.http, ObjectsAPI.createRequest("r\(index)", text))
            }
            let outcome = try await post(endpoints.http, ["query": "{ listObjects(limit: 30) { items { text } } }"])
            #expect(outcome.status == 200)
            #expect(outcome.json?["errors"]?[0]?["extensions"]?["code"] == "RESPONSE_TOO_LARGE")
            let small = try await post(endpoints.http, ["query": "{ listObjects(limit: 5) { items { objectId } } }"])
            #expect(small.json?["data"]?["listObjects"]?["items"]?.arrayValue?.count == 5)
        }
    }
}
