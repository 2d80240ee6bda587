import Foundation
import GQLDevServer
import Testing

@testable import GQLNet

/// A GraphQL answer keeps the order its query selected the fields in (the spec's ordered response map), from the
/// server's bytes to `GQLResult` and back to JSON text: against the in-process dev server (its compiled plans and
/// its executor) and against Strawberry, an independent server.
@Suite("Answers in selection order", .timeLimit(.minutes(2)))
struct AnswerOrderTests {
    @Test func devServerAnswersKeepTheSelectionsOrder() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let created = try await server.mutation(
                    "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { text objectId number } }",
                    ["input": ["objectId": "o1", "text": "hello", "number": 7] as GQLValue])
                #expect(created.errors.isEmpty, "\(created.errors)")
                #expect(created.data?["createObjects"]?.objectValue?.keys == ["text", "objectId", "number"])

                // The compiled plan's path.
                let planned = try await server.query(#"{ getObjects(objectId: "o1") { number text objectId } }"#)
                #expect(planned.data?["getObjects"]?.objectValue?.keys == ["number", "text", "objectId"])
                // Aliases and __typename go through GraphQLSwift's executor.
                let executed = try await server.query(
                    #"{ z: getObjects(objectId: "o1") { text __typename a: objectId } "#
                        + "b: listObjects { items { number objectId } } }")
                #expect(executed.errors.isEmpty, "\(executed.errors)")
                #expect(executed.data?.objectValue?.keys == ["z", "b"])
                #expect(executed.data?["z"]?.objectValue?.keys == ["text", "__typename", "a"])
                #expect(executed.data?["b"]?["items"]?[0]?.objectValue?.keys == ["number", "objectId"])
                // And written back in that order.
                #expect(
                    try planned.jsonValue.jsonString()
                        == #"{"data":{"getObjects":{"number":7,"text":"hello","objectId":"o1"}}}"#)
            }
        }
    }

    @Test func strawberryAnswersKeepTheSelectionsOrder() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let result = try await server.query(#"{ person(id: "1") { tags name id age } hello }"#)
                #expect(result.errors.isEmpty, "\(result.errors)")
                #expect(result.data?.objectValue?.keys == ["person", "hello"])
                #expect(result.data?["person"]?.objectValue?.keys == ["tags", "name", "id", "age"])
                let other = try await server.query(#"{ hello person(id: "1") { age id name tags } }"#)
                #expect(other.data?.objectValue?.keys == ["hello", "person"])
                #expect(other.data?["person"]?.objectValue?.keys == ["age", "id", "name", "tags"])
                // Same fields, other order: the same answer.
                #expect(other.data == result.data)
            }
        }
    }
}
