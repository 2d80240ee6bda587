import Foundation
import GQLDevServer
import Testing

@testable import GQLNet

/// `GQLServer` over HTTP against a `GQLDevServer` running in-process on a free port (in-memory SQLite).
@Suite("GQLServer over HTTP")
struct GQLServerHTTPTests {
    static let list = "{ listObjects { items { objectId text } } }"
    static let create = "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let get = "query($id: ID!) { getObjects(objectId: $id) { objectId text } }"

    struct Object: Decodable, Equatable {
        var objectId: String
        var text: String
    }

    @Test func queryAndMutationWithPlainSwiftVariables() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let created = try await server.mutation(Self.create, ["input": ["objectId": "a1", "text": "hello"]])
                #expect(created.errors.isEmpty)
                #expect(created.data == ["createObjects": ["objectId": "a1", "text": "hello"]])

                let fetched = try await server.query(Self.get, ["id": "a1"])
                #expect(fetched.data?["getObjects"]?["text"] == "hello")

                let listed = try await server.query(Self.list)
                #expect(listed.data?["listObjects"]?["items"]?.arrayValue?.count == 1)
            }
        }
    }

    @Test func typedDecodingAtAKeyPath() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let made = try await server.mutation(
                    Object.self, Self.create, ["input": ["objectId": "t1", "text": "typed"]], at: "createObjects")
                #expect(made == Object(objectId: "t1", text: "typed"))

                let one = try await server.query(Object.self, Self.get, ["id": "t1"], at: "getObjects")
                #expect(one == Object(objectId: "t1", text: "typed"))
                let items = try await server.query([Object].self, Self.list, at: "listObjects.items")
                #expect(items == [Object(objectId: "t1", text: "typed")])
                let text = try await server.query(String.self, Self.list, at: "listObjects.items.0.text")
                #expect(text == "typed")

                let missing = await #expect(throws: GQLError.self) {
                    try await server.query(Object.self, Self.list, at: "listObjects.nothing")
                }
                #expect(missing?.code == .notFound)
                #expect(missing?.message.contains("listObjects.nothing") == true)
            }
        }
    }

    @Test func graphQLErrorsArriveWithPartialData() async throws {
        let twice = """
            mutation { a: createObjects(input: {objectId: "p1", text: "x"}) { objectId }
                       b: createObjects(input: {objectId: "p1", text: "y"}) { objectId } }
            """
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let result = try await server.mutation(twice)
                #expect(result.data?["a"]?["objectId"] == "p1")
                #expect(result.data?["b"] == .null)
                #expect(result.errors.count == 1)
                #expect(result.errors.first?.path == [.key("b")])
                #expect(result.errors.first?.message.contains("already exists") == true)
                #expect(result.errors.first?.locations.isEmpty == false)

                let failure = await #expect(throws: GQLResult.Failure.self) {
                    try await server.query(
                        Object.self, "{ a: getObjects(objectId: \"p1\") { objectId text } b: nope }", at: "a")
                }
                #expect(failure?.errors.isEmpty == false)

                let partial = await #expect(throws: GQLResult.Failure.self) {
                    try await server.mutation(
                        String.self, twice.replacingOccurrences(of: "p1", with: "p2"), at: "a.objectId")
                }
                #expect(partial?.data?["a"]?["objectId"] == "p2")
                #expect(partial?.errors.first?.path == [.key("b")])
            }
        }
    }

    @Test func appSyncKey() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-test-key"
        try await withDevServer(configuration) { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
                #expect(error?.code == .http)
                #expect(error?.httpStatus == 401)
                #expect(error?.operation == "query")
            }
            try await withClient(GQLServer(AppSync: endpoint, key: "da2-wrong")) { server in
                let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
                #expect(error?.httpStatus == 401)
            }
            try await withClient(GQLServer(AppSync: endpoint, key: "da2-test-key")) { server in
                let result = try await server.query(Self.list)
                #expect(result.errors.isEmpty)
                #expect(result.data?["listObjects"]?["items"] == [])
            }
        }
    }

    @Test func hasuraSecretAndPerCallHeaders() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.adminSecret = "s3cret"
        try await withDevServer(configuration) { endpoint in
            try await withClient(GQLServer(Hasura: endpoint, secret: "s3cret")) { server in
                let allowed = try await server.query(Self.list)
                #expect(allowed.data?["listObjects"]?["items"] == [])
                // A per-call header replaces the server's header of the same name.
                let error = await #expect(throws: GQLError.self) {
                    try await server.query(Self.list, headers: ["X-Hasura-Admin-Secret": "wrong"])
                }
                #expect(error?.httpStatus == 401)
                #expect(error?.message.contains("s3cret") == false)
            }
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let result = try await server.query(Self.list, headers: ["x-hasura-admin-secret": "s3cret"])
                #expect(result.data?["listObjects"]?["items"] == [])
            }
        }
    }

    @Test func batchReturnsResultsInOrder() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let results = try await server.batch([
                    (query: Self.create, variables: ["input": ["objectId": "b1", "text": "one"]]),
                    (query: Self.create, variables: ["input": ["objectId": "b2", "text": "two"]]),
                    (query: Self.get, variables: ["id": "b2"]),
                    (query: Self.get, variables: ["id": "b1"]),
                    (query: "{ nope }", variables: [:]),
                ])
                #expect(results.count == 5)
                #expect(results[0].data?["createObjects"]?["objectId"] == "b1")
                #expect(results[1].data?["createObjects"]?["objectId"] == "b2")
                #expect(results[2].data?["getObjects"]?["text"] == "two")
                #expect(results[3].data?["getObjects"]?["text"] == "one")
                #expect(results[4].errors.isEmpty == false)
                let none = try await server.batch([])
                #expect(none.isEmpty)
            }
        }
    }

    @Test func batchRefusedByTheServerIsAClearError() throws {
        let single: GQLValue = ["errors": [["message": "batching is not supported"]]]
        let error = #expect(throws: GQLError.self) { try GQLServer.batchResults(single, count: 2) }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("does not accept batched requests") == true)
        let short = #expect(throws: GQLError.self) { try GQLServer.batchResults([["data": nil]], count: 2) }
        #expect(short?.message.contains("got 1 responses") == true)
    }

    @Test func serverFaultIsAnHTTPStatusError() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.faults.failRate = 1
        try await withDevServer(configuration) { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let error = await #expect(throws: GQLError.self) { try await server.mutation(Self.list) }
                #expect(error?.code == .http)
                #expect(error?.httpStatus == 500)
                #expect(error?.operation == "mutation")
                #expect(error?.message.contains("HTTP 500") == true)
            }
        }
    }

    @Test func wrongPathIsAnHTTPStatusError() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint + "/nowhere")) { server in
                let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
                #expect(error?.code == .http)
                #expect(error?.httpStatus == 404)
            }
        }
    }

    @Test func nonJSONAndMalformedAnswers() throws {
        let server = GQLServer(HTTP: "http://127.0.0.1:1/graphql?token=secret")
        defer { Task { try? await server.shutdown() } }
        let html = #expect(throws: GQLError.self) {
            try server.answer(status: 200, body: Data("<html>Bad gateway</html>".utf8), operation: "query")
        }
        #expect(html?.code == .invalidResponse)
        #expect(html?.message.contains("<html>Bad gateway") == true)
        #expect(html?.message.contains("secret") == false)
        let empty = #expect(throws: GQLError.self) { try server.answer(status: 200, body: Data(), operation: "query") }
        #expect(empty?.message.contains("empty body") == true)
        let notAResponse = #expect(throws: GQLError.self) { try GQLResult(response: ["hello": 1]) }
        #expect(notAResponse?.code == .invalidResponse)
        let badErrors = #expect(throws: GQLError.self) { try GQLResult(response: ["errors": "oops"]) }
        #expect(badErrors?.code == .invalidResponse)
    }

    @Test func unreachableServerAndBadURL() async throws {
        // Refused at once: with an hour's connect timeout, waiting for it would hit the suite's time limit.
        var patient = GQLServer.Configuration()
        patient.connectTimeout = .seconds(3600)
        try await withClient(GQLServer(HTTP: "http://127.0.0.1:1/graphql", configuration: patient)) { server in
            let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
            #expect(error?.code == .connection)
            #expect(
                error?.message == "the query to http://127.0.0.1:1/graphql failed: connection refused",
                "\(String(describing: error))")
            #expect(error?.httpStatus == nil)
        }
        try await withClient(GQLServer(HTTP: "not a url")) { server in
            let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
            #expect(error?.code == .invalidArgument)
        }
        let server = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        try await server.shutdown()
        try await server.shutdown()  // a second call does nothing
        let closed = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
        #expect(closed?.code == .closed)
    }

    @Test func oversizedAnswerIsRefused() async throws {
        var client = GQLServer.Configuration()
        client.maximumResponseSize = 64
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint, configuration: client)) { server in
                let error = await #expect(throws: GQLError.self) {
                    try await server.mutation(
                        Self.create, ["input": ["objectId": "big", "text": String(repeating: "x", count: 200)]])
                }
                #expect(error?.code == .responseTooLarge)
            }
        }
    }

    @Test func slowServerTimesOut() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.faults.latencyMilliseconds = 1_500
        var client = GQLServer.Configuration()
        client.timeout = .milliseconds(200)
        try await withDevServer(configuration) { endpoint in
            try await withClient(GQLServer(HTTP: endpoint, configuration: client)) { server in
                // The answer would come after 1.5 s: a timeout error (not a result) shows the 200 ms limit held.
                let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
                #expect(error?.code == .timeout)
            }
        }
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        // A server that reads the request and never answers: cancelling is the only way the call can end.
        let hanging = try HangingHTTPServer()
        var events = hanging.events.makeAsyncIterator()
        try await withClient(GQLServer(HTTP: "http://127.0.0.1:\(hanging.port)/graphql")) { server in
            let task = Task { try await server.query(Self.list) }
            // The barrier: the request is in flight once the server has read it.
            #expect(await events.next() == .requestReceived)
            task.cancel()
            let error = await #expect(throws: GQLError.self) { try await task.value }
            #expect(error?.code == .cancelled)
            // And the request really ended: the client closed its connection.
            #expect(await events.next() == .closedByClient)
        }
    }

    @Test func completionHandlerAdapters() async throws {
        try await withDevServer { endpoint in
            try await withClient(GQLServer(HTTP: endpoint)) { server in
                let created = await withCheckedContinuation { continuation in
                    server.mutation(Self.create, ["input": ["objectId": "c1", "text": "callback"]]) { result, error in
                        continuation.resume(returning: (result, error == nil))
                    }
                }
                #expect(created.1)
                #expect(created.0?.data?["createObjects"]?["objectId"] == "c1")

                let fetched = await withCheckedContinuation { continuation in
                    server.query(Self.get, ["id": "c1"]) { result, error in
                        continuation.resume(returning: result?.data?["getObjects"]?["text"])
                    }
                }
                #expect(fetched == "callback")
            }
            try await withClient(GQLServer(HTTP: endpoint + "/nowhere")) { server in
                let failed = await withCheckedContinuation { continuation in
                    server.query(Self.list) { result, error in
                        continuation.resume(returning: (result == nil, (error as? GQLError)?.httpStatus))
                    }
                }
                #expect(failed.0)
                #expect(failed.1 == 404)
            }
        }
    }

    @Test func nullDataIsNoData() throws {
        let result = try GQLResult(response: ["data": nil, "errors": [["message": "boom"]]])
        #expect(result.data == nil)
        #expect(result.errors.map(\.message) == ["boom"])
        #expect(try GQLResult(response: ["data": ["a": nil]]).data == ["a": nil])
    }

    @Test func graphQLResponsesWithA4xxStatusAreResults() throws {
        let server = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        defer { Task { try? await server.shutdown() } }
        let body = Data(#"{"errors":[{"message":"Cannot query field \"nope\""}]}"#.utf8)
        let answer = try server.answer(
            status: 400, contentType: "application/graphql-response+json; charset=utf-8", body: body, operation: "query"
        )
        #expect(try GQLResult(response: answer).errors.first?.message == #"Cannot query field "nope""#)
        // The same body as plain JSON is an HTTP error, as before GraphQL over HTTP.
        let plain = #expect(throws: GQLError.self) {
            try server.answer(status: 400, contentType: "application/json", body: body, operation: "query")
        }
        #expect(plain?.httpStatus == 400)
    }
}
