import GQLCore
import Testing

@testable import GQLDevServer

/// On the wire, `data` lists its members in selection order, whether a compiled plan or the executor answered, in
/// an HTTP batch (one response budget for all) and in a graphql-transport-ws `next`.
@Suite("GQLDevServer's response order on the wire", .timeLimit(.minutes(1)))
struct ServerResponseOrderTests {
    static let create =
        "mutation { createObjects(input: {objectId: \"w\", text: \"t\", number: 3}) { number objectId } }"
    static let planned = #"{ getObjects(objectId: "w") { text n: number objectId __typename } }"#
    static let executed = #"{ getObjects(objectId: "w") { ... on Objects { text n: number objectId __typename } } }"#
    static let object = #"{"text":"t","n":3,"objectId":"w","__typename":"Objects"}"#

    @Test("an HTTP batch: each answer in selection order, the budget shared")
    func httpBatch() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.maxResponseBytes = 400
        try await withDevServer(configuration) { _, endpoints in
            let requests: GQLValue = [
                ["query": .string(Self.create)], ["query": .string(Self.planned)], ["query": .string(Self.executed)],
                ["query": .string(Self.planned)],
            ]
            let outcome = try await post(endpoints.http, requests)
            #expect(outcome.status == 200)
            let answers = try #require(outcome.json?.arrayValue)
            #expect(answers.count == 4)
            let text = outcome.text
            #expect(text.hasPrefix(#"[{"data":{"createObjects":{"number":3,"objectId":"w"}}},"#))
            #expect(text.contains(#"{"data":{"getObjects":"# + Self.object + "}}"))
            // Each row read costs about 185 bytes of the 400: the third get is refused by the budget the batch shares.
            #expect(answers[3]["errors"]?[0]?["extensions"]?["code"] == "RESPONSE_TOO_LARGE")
        }
    }

    @Test("graphql-transport-ws: the next message's payload in selection order")
    func transportWS() async throws {
        try await withDevServer { _, endpoints in
            _ = try await post(endpoints.http, ["query": .string(Self.create)])
            let outcome = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init"])
                _ = try await socket.receive()
                var texts: [String] = []
                for (id, query) in [("p", Self.planned), ("e", Self.executed)] {
                    try await socket.send([
                        "type": "subscribe", "id": .string(id), "payload": ["query": .string(query)],
                    ])
                    texts.append(try #require(try await socket.receiveText()))
                    _ = try await socket.receive()  // complete
                }
                return texts
            }
            let texts = try #require(outcome.result)
            #expect(texts[0] == #"{"id":"p","payload":{"data":{"getObjects":"# + Self.object + #"}},"type":"next"}"#)
            #expect(texts[1] == #"{"id":"e","payload":{"data":{"getObjects":"# + Self.object + #"}},"type":"next"}"#)
        }
    }
}
