import GQLCore
import Testing

@testable import GQLNet

/// `GQLServer.refusesBatches`: which failures of a batch mean that the server does not take JSON arrays (so its
/// operations may go one by one), and which would refuse or delay each operation alike.
@Suite struct BatchRefusalTests {
    static func http(_ status: Int) -> GQLError {
        GQLError(.http, "HTTP \(status) from the server", operation: "batch", httpStatus: status)
    }

    @Test(arguments: [400, 404, 405, 413, 415, 422, 501]) func statusesThatRefuseTheArrayItself(status: Int) {
        #expect(GQLServer.refusesBatches(Self.http(status)))
    }

    @Test(arguments: [401, 403, 407, 408, 409, 429, 500, 502, 503]) func statusesThatWouldMeetEachOperation(status: Int)
    {
        #expect(!GQLServer.refusesBatches(Self.http(status)))
    }

    @Test func aSingleAnswerToAnArrayRefusesIt() throws {
        let error = #expect(throws: GQLError.self) {
            try GQLServer.batchResults(["errors": [["message": "POST body is expected to be an object"]]], count: 2)
        }
        #expect(error.map(GQLServer.refusesBatches) == true)
        // Another wrong answer (a count that does not match) is no refusal of batches.
        let short = #expect(throws: GQLError.self) { try GQLServer.batchResults([["data": nil]], count: 2) }
        #expect(short.map(GQLServer.refusesBatches) == false)
        #expect(!GQLServer.refusesBatches(GQLError(.timeout, "no answer", operation: "batch")))
    }
}
