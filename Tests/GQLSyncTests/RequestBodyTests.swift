import Foundation
import GQLCore
import GQLNet
import GQLTestSupport
import Testing

@testable import GQLSync

/// An item sent alone goes with the JSON body made from its stored text (``RequestBody``): valid JSON of the
/// request, and the same bytes at every attempt, whichever way the loop read the item (claimed or read ahead).
@Suite(.timeLimit(.minutes(2))) struct RequestBodyTests {
    @Test func theBodyIsTheRequestAsJSON() throws {
        let query = "mutation M($input: I!) {\n  m(input: $input) { id note: text(f: \"a\\\\b\") }\n}\t☃"
        let input = #"{"text":"x\"y","n":1,"list":[1,{"a":null}],"é":true}"#
        let wrapped = RequestBody.make(
            prefix: RequestBody.prefix(query: query, wrap: "input"), wrapped: true, input: input)
        let expectedValues = try GQLValue(json: Data(input.utf8))
        #expect(
            try GQLValue(jsonBytes: wrapped)
                == .object(["query": .string(query), "variables": .object(["input": expectedValues])]))
        // The values' text is kept byte for byte, in its member order.
        #expect(String(decoding: wrapped, as: UTF8.self).contains(#""variables":{"input":"# + input + "}}"))

        let bare = RequestBody.make(prefix: RequestBody.prefix(query: query, wrap: nil), wrapped: false, input: input)
        #expect(try GQLValue(jsonBytes: bare) == .object(["query": .string(query), "variables": expectedValues]))
        let oddWrap = RequestBody.make(
            prefix: RequestBody.prefix(query: "q", wrap: "in\"put"), wrapped: true, input: "{}")
        #expect(try GQLValue(jsonBytes: oddWrap) == ["query": "q", "variables": ["in\"put": [:]]])
    }

    static func values(_ n: Int) -> GQLValues {
        ["n": .int(Int64(n)), "title": .string("t\(n)"), "body": "b", "a": true, "z": nil, "m": [1, 2]]
    }

    @Test func aRetriedItemIsSentWithTheSameBytes() async throws {
        // The first item is claimed, the second read ahead; the second's first send fails (503) and it is sent
        // again from a claim. Every item's two requests must carry one body (a server that keeps answers by
        // Idempotency-Key refuses the same key with another body), and each body is the request for its values.
        let hostile = try HostileServer { index, _ in
            index == 1 ? .http(503, "busy") : .json(#"{"data":{"createNote":{"id":"a","n":1}}}"#)
        }
        defer { hostile.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let client = GQLServer(HTTP: hostile.url)
        var configuration = GQLSync.Configuration()
        configuration.name = "bodies"  // one engine for both servers (by default the name follows the URL)
        configuration.queries = try syncTestQueries()
        configuration.inputArgument = "input"
        configuration.backoff = GQLBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        let path = directory.path("outbox.sqlite")
        // Queued while offline, so that the next engine claims the first and reads the rest ahead.
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        let queue = try GQLSync(offline, path: path, configuration: configuration)
        // Six members: the stored text keeps the dictionary's order, a body written again from parsed values is
        // sorted, so two bodies made the two ways differ but for one order in 720.
        for n in 1...3 {
            try await queue.steady("CreateNote", Self.values(n).mapValues { $0 as any GQLValueConvertible })
        }
        // Counted by the engine that cannot reach its server: the next one starts sending as it opens.
        #expect(queue.pendingCount == 3)
        try await queue.shutdown()
        try await offline.shutdown()

        let sync = try GQLSync(client, path: path, configuration: configuration)
        try await sync.drain()
        try await sync.shutdown()
        try await client.shutdown()

        let bodies = hostile.bodies
        #expect(bodies.count == 4)
        guard bodies.count == 4 else { return }
        #expect(bodies[1] == bodies[2], "the retried item's two bodies differ")
        let query = try configuration.queries.document(named: "CreateNote").text
        for (body, n) in zip([bodies[0], bodies[2], bodies[3]], 1...3) {
            let request = try GQLValue(json: Data(body.utf8))
            #expect(request["query"]?.stringValue == query)
            #expect(request["variables"] == ["input": .object(Self.values(n))])
        }
    }
}
