import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLDevServer

/// The direct reader keeps where each header value lies in the request's bytes (e5ef528) and the handler makes the
/// text from the buffer it read: a request that is not first in its read, or whose parts come in several reads,
/// still has its key, Origin and Idempotency-Key read right.
@Suite("The direct path's header values in pipelined and split requests", .serialized, .timeLimit(.minutes(3)))
struct DirectHTTPHeaderValueTests {
    static let allowed = "http://app.example"

    static var configuration: GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-secret"
        configuration.allowedOrigins = [allowed]
        return configuration
    }

    static let keyed = "Content-Type: application/json\r\nx-api-key: da2-secret\r\n"
    static let browser = "Origin: \(allowed)\r\n" + keyed

    /// A query with the key, then a mutation with Origin, the key (spaces around it) and an Idempotency-Key.
    static func pair(_ id: String) throws -> [UInt8] {
        let first = try DirectHTTPAttackTests.query("{ listObjects { nextToken } }", headers: keyed)
        let second = try DirectHTTPAttackTests.query(
            #"mutation { createObjects(input: {objectId: "\#(id)", text: "t"}) { objectId } }"#,
            headers: "Origin: \(allowed)\r\nContent-Type: application/json\r\nX-API-Key:  da2-secret \r\n"
                + "Idempotency-Key: key-\(id)\r\n")
        return Array((first + second).utf8)
    }

    @Test func valuesAreReadRightWhereverTheBytesAreSplit() async throws {
        try await withDevServer(Self.configuration) { _, endpoints in
            let wire = try AttackWire(port: try DirectHTTPAttackTests.port(endpoints))
            let pair = try Self.pair("z")
            var first: [AttackWire.Response]?
            for split in 1..<pair.count {
                await wire.send(Array(pair[..<split]))
                try await Task.sleep(for: .milliseconds(1))
                await wire.send(Array(pair[split...]))
                let answers = await wire.receive(responses: 2, timeout: 5).responses.map(\.normalized)
                #expect(answers.count == 2, "split \(split)")
                guard answers.count == 2 else { break }
                #expect(answers[0].body == DirectHTTPAttackTests.listAnswer, "split \(split)")
                #expect(answers[0].header("Access-Control-Allow-Origin") == nil, "split \(split)")
                #expect(answers[1].status == 200, "split \(split): \(answers[1])")
                #expect(answers[1].body == #"{"data":{"createObjects":{"objectId":"z"}}}"#, "split \(split)")
                #expect(answers[1].header("Access-Control-Allow-Origin") == Self.allowed, "split \(split)")
                // The same key each time: the mutation's answer is replayed, equal to the first.
                if let first { #expect(first == answers, "split \(split)") } else { first = answers }
            }
        }
    }

    @Test func pipelinedRequestsAreAnsweredAsTheRouterAnswersThem() async throws {
        try await DirectHTTPAttackTests.withServers(Self.configuration) { direct, reference in
            let refused =
                try DirectHTTPAttackTests.query("{ nope }", headers: Self.browser)
                + DirectHTTPAttackTests.post(#"{"query":"#, headers: Self.browser)
            let bytes = try Self.pair("r") + Self.pair("r") + Self.pair("s") + Array(refused.utf8)
            let viaDirect = try await DirectHTTPAttackTests.exchange(direct, bytes)
            let viaRouter = try await DirectHTTPAttackTests.exchange(reference, bytes)
            #expect(viaDirect.0.count == 8, "\(viaDirect.0)")
            #expect(viaDirect.0 == viaRouter.0, "direct \(viaDirect.0) router \(viaRouter.0)")
        }
    }
}
