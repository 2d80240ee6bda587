import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

@Suite("GQLDevServer over HTTP", .timeLimit(.minutes(1)))
struct ServerHTTPTests {
    @Test("endpoints name the bound port and the path")
    func endpoints() async throws {
        try await withDevServer { _, endpoints in
            let http = try #require(URL(string: endpoints.http))
            let webSocket = try #require(URL(string: endpoints.webSocket))
            #expect(http.scheme == "http" && webSocket.scheme == "ws")
            #expect(http.host == "127.0.0.1" && http.path == "/graphql")
            #expect(http.port == webSocket.port && (http.port ?? 0) > 0)
        }
    }

    @Test("POST runs a mutation and a query with variables, and answers 200 with JSON")
    func postQuery() async throws {
        try await withDevServer { _, endpoints in
            let created = try await post(endpoints.http, ObjectsAPI.createRequest("a", "x"))
            #expect(created.status == 200)
            #expect(created.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(created.json == ObjectsAPI.created("a", "x"))
            let outcome = try await post(endpoints.http, ["query": .string(ObjectsAPI.get), "variables": ["id": "a"]])
            #expect(outcome.status == 200)
            #expect(outcome.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(outcome.json == ["data": ["getObjects": ObjectsAPI.object("a", "x")]])
        }
    }

    @Test("GET runs a query from the query string, with its variables")
    func getQuery() async throws {
        try await withDevServer { _, endpoints in
            _ = try await post(endpoints.http, ObjectsAPI.createRequest("g", "got"))
            let url = try getURL(endpoints.http, query: ObjectsAPI.get, variables: ["id": "g"])
            let outcome = try await httpRequest(url, method: "GET")
            #expect(outcome.status == 200)
            #expect(outcome.json == ["data": ["getObjects": ObjectsAPI.object("g", "got")]])
        }
    }

    @Test("GET refuses a mutation with 405 and Allow: POST, and does not run it")
    func getMutation() async throws {
        try await withDevServer { _, endpoints in
            let url = try getURL(
                endpoints.http, query: #"mutation { createObjects(input: {objectId: "m"}) { objectId } }"#)
            let outcome = try await httpRequest(url, method: "GET")
            #expect(outcome.status == 405)
            #expect(outcome.headers["allow"] == "POST")
            #expect(outcome.json?["errors"]?[0]?["message"]?.stringValue?.contains("POST") == true)
            let list = try await post(endpoints.http, ["query": .string(ObjectsAPI.list)])
            #expect(list.json == ObjectsAPI.listed([]))
        }
    }

    @Test("a batch is executed in order and answered as an array")
    func batch() async throws {
        try await withDevServer { _, endpoints in
            let list: GQLValue = ["query": .string(ObjectsAPI.list)]
            let outcome = try await post(endpoints.http, [list, ObjectsAPI.createRequest("b", "batched"), list])
            #expect(outcome.status == 200)
            let responses = try #require(outcome.json?.arrayValue)
            #expect(
                responses == [
                    ObjectsAPI.listed([]), ObjectsAPI.created("b", "batched"),
                    ObjectsAPI.listed([ObjectsAPI.object("b", "batched")]),
                ])
        }
    }

    @Test("GraphQL errors answer 200 with errors")
    func graphQLErrors() async throws {
        try await withDevServer { _, endpoints in
            let syntax = try await post(endpoints.http, ["query": "not graphql"])
            #expect(syntax.status == 200)
            #expect(syntax.json?["data"] == nil)
            #expect(syntax.json?["errors"]?[0]?["message"]?.stringValue?.contains("Syntax Error") == true)
            let unknownField = try await post(endpoints.http, ["query": "{ listObjects { items { nope } } }"])
            #expect(unknownField.status == 200)
            #expect(unknownField.json?["data"] == nil)
            #expect(
                unknownField.json?["errors"]?[0]?["message"]
                    == #"Cannot query field "nope" on type "Objects"."#)
            let subscription = try await post(endpoints.http, ["query": .string(ObjectsAPI.onCreate)])
            #expect(subscription.status == 200)
            #expect(subscription.json?["errors"]?[0]?["message"]?.stringValue?.contains("WebSocket") == true)
        }
    }

    @Test(
        "malformed requests answer 400 with a JSON error",
        arguments: [
            #"{"query": "{ listObjects { items { objectId } } }""#, #"{"variables": {}}"#, #"{"query": 42}"#,
            #"{"query": "{ listObjects { items { objectId } } }", "variables": [1]}"#,
            #"{"query": "{ listObjects { items { objectId } } }", "operationName": 1}"#, "[]",
            "[1]", #""just a string""#,
        ])
    func malformed(body: String) async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await httpRequest(endpoints.http, body: body)
            #expect(outcome.status == 400)
            #expect(outcome.json?["errors"]?[0]?["message"]?.stringValue?.isEmpty == false)
        }
    }

    @Test("a body over maxBodyBytes answers 413 with a JSON error")
    func tooLarge() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.maxBodyBytes = 64
        try await withDevServer(configuration) { _, endpoints in
            let big = try await post(
                endpoints.http, ["query": .string("{ " + String(repeating: "x ", count: 100) + "}")])
            #expect(big.status == 413)
            #expect(big.json?["errors"]?[0]?["message"]?.stringValue?.contains("64 bytes") == true)
            let small = try await post(endpoints.http, ["query": .string(ObjectsAPI.list)])
            #expect(small.status == 200 && small.json == ObjectsAPI.listed([]))
        }
    }

    @Test("an API key is required when configured")
    func apiKey() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-secret"
        try await withDevServer(configuration) { _, endpoints in
            let missing = try await post(endpoints.http, ObjectsAPI.createRequest("k", "no key"))
            #expect(missing.status == 401)
            #expect(missing.json?["errors"]?[0]?["message"] != nil)
            let wrong = try await post(
                endpoints.http, ObjectsAPI.createRequest("k", "wrong key"), headers: ["x-api-key": "da2-wrong"])
            #expect(wrong.status == 401)
            let right = try await post(
                endpoints.http, ObjectsAPI.createRequest("k", "right key"), headers: ["X-Api-Key": "da2-secret"])
            #expect(right.status == 200 && right.json == ObjectsAPI.created("k", "right key"))
            let listURL = try getURL(endpoints.http, query: ObjectsAPI.list)
            let get = try await httpRequest(listURL, method: "GET")
            #expect(get.status == 401)
            let authorizedGet = try await httpRequest(listURL, method: "GET", headers: ["x-api-key": "da2-secret"])
            #expect(authorizedGet.status == 200)
            #expect(authorizedGet.json == ObjectsAPI.listed([ObjectsAPI.object("k", "right key")]))
            // Only the authorized mutation ran.
            let list = try await post(
                endpoints.http, ["query": .string(ObjectsAPI.list)], headers: ["x-api-key": "da2-secret"])
            #expect(list.json == ObjectsAPI.listed([ObjectsAPI.object("k", "right key")]))
        }
    }

    @Test("an admin secret is required when configured")
    func adminSecret() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.adminSecret = "hush"
        try await withDevServer(configuration) { _, endpoints in
            let wrong = try await post(
                endpoints.http, ["query": .string(ObjectsAPI.list)], headers: ["x-hasura-admin-secret": "loud"])
            #expect(wrong.status == 401)
            let right = try await post(
                endpoints.http, ["query": .string(ObjectsAPI.list)], headers: ["x-hasura-admin-secret": "hush"])
            #expect(right.status == 200 && right.json == ObjectsAPI.listed([]))
        }
    }

    @Test("failRate answers 500 for the seeded share of POSTs")
    func failRate() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.faults.failRate = 0.5
        configuration.faults.seed = 7
        var random = SplitMix64(seed: 7)
        let expected = (0..<12).map { _ in random.nextUnitInterval() < 0.5 ? 500 : 200 }
        #expect(expected.contains(500) && expected.contains(200))
        try await withDevServer(configuration) { _, endpoints in
            var statuses: [Int] = []
            for _ in 0..<12 {
                let outcome = try await post(endpoints.http, ["query": .string(ObjectsAPI.list)])
                statuses.append(outcome.status)
                if outcome.status == 500 { #expect(outcome.json?["errors"] != nil) }
                if outcome.status == 200 { #expect(outcome.json == ObjectsAPI.listed([])) }
            }
            #expect(statuses == expected)
        }
    }

    @Test("latency delays the answer, which stays correct")
    func latency() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.faults.latencyMilliseconds = 60
        try await withDevServer(configuration) { _, endpoints in
            let start = ContinuousClock.now
            let outcome = try await post(endpoints.http, ObjectsAPI.createRequest("l", "late"))
            // A lower bound only: the server cannot answer before the injected delay.
            #expect(ContinuousClock.now - start >= .milliseconds(60))
            #expect(outcome.status == 200 && outcome.json == ObjectsAPI.created("l", "late"))
        }
    }

    @Test("other methods on the path answer 405")
    func otherMethods() async throws {
        try await withDevServer { _, endpoints in
            let outcome = try await httpRequest(endpoints.http, method: "PUT", body: "{}")
            #expect(outcome.status == 405)
        }
    }
}
