import AsyncHTTPClient
import Foundation
import GQLCore
import NIOCore
import Synchronization

/// GraphQL over HTTP POST to one endpoint, through a shared AsyncHTTPClient connection pool.
struct GraphQLHTTP: Sendable {
    let client: HTTPClient
    let url: String

    /// POSTs `body` (a JSON request) and returns the status and the response text.
    func post(_ body: String) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(10))
        let buffer = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: buffer))
    }

    /// POSTs `body` and checks the answer exactly: status 200 and a JSON document equal to `expected` (the right
    /// object with the right fields and values, nothing else, no `errors`).
    func answers(_ body: String, _ expected: GQLValue) async -> Bool {
        guard let (status, text) = try? await post(body), status == 200 else { return false }
        return (try? GQLValue(json: text)) == expected
    }

    /// POSTs `body`, checks the answer as `answers` does, and returns its exact text, or nil when it was wrong.
    func checkedText(_ body: String, _ expected: GQLValue) async -> String? {
        guard let (status, text) = try? await post(body), status == 200, (try? GQLValue(json: text)) == expected
        else { return nil }
        return text
    }

    static func json(_ query: String, _ variables: [String: Any]) -> String {
        let object: [String: Any] = ["query": query, "variables": variables]
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// Operations per second of a closed loop: `clients` tasks, each sending its next request when the previous
/// one answered, for `duration`.
struct Throughput: Sendable {
    var operations: Int
    var failures: Int
    var seconds: Double
    var perSecond: Double { seconds > 0 ? Double(operations) / seconds : 0 }

    static func measure(
        clients: Int, duration: Duration, _ operation: @escaping @Sendable (_ client: Int, _ index: Int) async -> Bool
    ) async -> Throughput {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + duration
        let counts = await withTaskGroup(of: (Int, Int).self) { group in
            for client in 0..<clients {
                group.addTask {
                    var done = 0
                    var failed = 0
                    var index = 0
                    while clock.now < deadline {
                        if await operation(client, index) { done += 1 } else { failed += 1 }
                        index += 1
                    }
                    return (done, failed)
                }
            }
            var total = (0, 0)
            for await (done, failed) in group {
                total.0 += done
                total.1 += failed
            }
            return total
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Throughput(operations: counts.0, failures: counts.1, seconds: seconds)
    }
}

/// The queries and mutations the benchmark sends, the same text for every server, and the exact answers expected.
enum Operations {
    static let get = "query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }"
    static let create = """
        mutation Create($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text number } }
        """

    static func getBody(_ key: String) -> String { GraphQLHTTP.json(get, ["id": key]) }

    static func createBody(_ key: String, text: String = "benchmark", number: Int = 1) -> String {
        GraphQLHTTP.json(create, ["input": ["objectId": key, "text": text, "number": number, "boolean": true]])
    }

    /// The answer to `getBody(key)` for an object made by `createBody(key, number: number)`.
    static func getAnswer(_ key: String, number: Int) -> GQLValue {
        [
            "data": [
                "getObjects": [
                    "objectId": .string(key), "text": "benchmark", "number": .int(Int64(number)), "double": .null,
                    "boolean": true,
                ]
            ]
        ]
    }

    /// The answer to `createBody(key, number: number)`.
    static func createAnswer(_ key: String, number: Int) -> GQLValue {
        ["data": ["createObjects": ["objectId": .string(key), "text": "benchmark", "number": .int(Int64(number))]]]
    }
}
