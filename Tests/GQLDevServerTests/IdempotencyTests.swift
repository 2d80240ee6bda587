import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLDevServer

/// Mutations sent with an `Idempotency-Key`: a repeat is answered from the first run, on every path a request
/// can take through the server (the direct path, the planned handler after a hand-over, the router).
@Suite("Idempotency-Key")
struct IdempotencyTests {
    enum Path: String, CaseIterable {
        /// Plain POSTs on a fresh connection: read from the bytes before NIO's parser.
        case direct
        /// POSTs after a GET on the same connection: the connection was handed over to the planned handler.
        case planned
        /// POSTs with a `Connection` header that sends them to the router (``usualPathConnection``).
        case router
    }

    /// A POST of `value` with `headers`, as bytes for a raw connection.
    static func request(_ value: GQLValue, _ headers: [String], path: Path) throws -> String {
        raw(try value.jsonString(), headers, path: path)
    }

    /// A POST of the JSON text `body` with `headers`, as bytes for a raw connection.
    static func raw(_ body: String, _ headers: [String], path: Path) -> String {
        var lines = ["POST /graphql HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
        lines.append("Content-Length: \(body.utf8.count)")
        if path == .router { lines.append("\(usualPathConnection.name): \(usualPathConnection.value)") }
        return (lines + headers).map { $0 + "\r\n" }.joined() + "\r\n" + body
    }

    /// Sends one request and reads its answer.
    static func exchange(_ connection: RawConnection, _ text: String) async -> (status: Int, body: String) {
        await connection.send(text)
        return await connection.readAnswers(1).first ?? (0, "")
    }

    static func key(_ value: String) -> [String] { ["Idempotency-Key: \(value)"] }

    @Test(
        "a repeat gets the first answer and runs nothing; another body gets 422; a bad key 400",
        arguments: Path.allCases)
    func repeats(path: Path) async throws {
        try await withDevServer { server, endpoints in
            let port = try required(URL(string: endpoints.http)?.port)
            let connection = try RawConnection(port: port)
            if path == .planned {
                let get = "GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                #expect(await Self.exchange(connection, get).status == 200)
            }
            let create = try Self.request(ObjectsAPI.createRequest("a", "one"), Self.key("k-1"), path: path)
            let first = await Self.exchange(connection, create)
            #expect(first.status == 200)
            #expect(try GQLValue(json: first.body) == ObjectsAPI.created("a", "one"))
            // Run again, the create would fail: the object exists. It is answered as the first time.
            let again = await Self.exchange(connection, create)
            #expect(again.status == 200 && again.body == first.body)
            // The same request written otherwise (members in another order, spaces) is the same request.
            let variables = #"{ "input" : { "text": "one", "objectId": "a" } }"#
            let reordered =
                #"{"variables": \#(variables), "query": \#(try GQLValue.string(ObjectsAPI.create).jsonString())}"#
            let rewritten = await Self.exchange(connection, Self.raw(reordered, Self.key("k-1"), path: path))
            #expect(rewritten.status == 200 && rewritten.body == first.body)
            #expect(server.idempotentReplays == 2)

            let other = try Self.request(ObjectsAPI.createRequest("b", "two"), Self.key("k-1"), path: path)
            let reused = await Self.exchange(connection, other)
            #expect(reused.status == 422 && reused.body.contains("IDEMPOTENCY_KEY_REUSED"))
            for bad in [Self.key(""), Self.key(String(repeating: "k", count: 256)), Self.key("k-2") + Self.key("k-2")] {
                let refused = await Self.exchange(
                    connection, try Self.request(ObjectsAPI.createRequest("b", "two"), bad, path: path))
                #expect(refused.status == 400 && refused.body.contains("IDEMPOTENCY_KEY_INVALID"))
            }
            // The longest key is accepted, and nothing refused above ran.
            let longest = try Self.request(
                ObjectsAPI.createRequest("b", "two"), Self.key(String(repeating: "k", count: 255)), path: path)
            let accepted = await Self.exchange(connection, longest)
            #expect(try GQLValue(json: accepted.body) == ObjectsAPI.created("b", "two"))
            let listed = try await post(endpoints.http, ["query": .string(ObjectsAPI.list)])
            #expect(listed.json == ObjectsAPI.listed([ObjectsAPI.object("a", "one"), ObjectsAPI.object("b", "two")]))
        }
    }

    @Test("a repeat while the first request runs gets 409; once it has answered, its answer")
    func repeatWhileRunning() async throws {
        let fixture = try EngineFixture()
        let gated = GatedEngine(fixture.engine)
        defer { withExtendedLifetime(fixture) {} }
        try await withDevServer(engine: gated) { server, endpoints in
            let body = try ObjectsAPI.createRequest("a", "one").jsonString()
            let headers = ["Idempotency-Key": "k-1"]
            let first = Task { try await httpRequest(endpoints.http, body: body, headers: headers) }
            var entered = gated.entered.stream.makeAsyncIterator()
            _ = await entered.next()
            let during = try await httpRequest(endpoints.http, body: body, headers: headers)
            #expect(during.status == 409)
            #expect(during.json?["errors"]?[0]?["extensions"]?["code"] == "IDEMPOTENCY_KEY_IN_USE")
            gated.open()
            let answered = try await first.value
            #expect(answered.status == 200 && answered.json == ObjectsAPI.created("a", "one"))
            let after = try await httpRequest(endpoints.http, body: body, headers: headers)
            #expect(after.status == 200 && after.text == answered.text)
            #expect(server.idempotentReplays == 1)
        }
    }

    @Test("a key belongs to its credentials; a refused request does not use it up; queries are not recorded")
    func scope() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "api"
        configuration.adminSecret = "admin"
        try await withDevServer(configuration) { _, endpoints in
            let create = { (id: String, headers: [String: String]) in
                try await post(endpoints.http, ObjectsAPI.createRequest(id, "x"), headers: headers)
            }
            #expect(try await create("a", ["Idempotency-Key": "k", "x-api-key": "wrong"]).status == 401)
            #expect(
                try await create("a", ["Idempotency-Key": "k", "x-api-key": "api"]).json == ObjectsAPI.created("a", "x")
            )
            // The same key from another client is its own: another body is not a reuse.
            #expect(
                try await create("b", ["Idempotency-Key": "k", "x-hasura-admin-secret": "admin"]).json
                    == ObjectsAPI.created("b", "x"))
            for query in [ObjectsAPI.list, "{ __typename }"] {
                let answer = try await post(
                    endpoints.http, ["query": .string(query)], headers: ["Idempotency-Key": "q", "x-api-key": "api"])
                #expect(answer.status == 200 && answer.json?["errors"] == nil)
            }
        }
    }

    @Test("with idempotentAnswers 0 the header is ignored")
    func off() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.idempotentAnswers = 0
        try await withDevServer(configuration) { server, endpoints in
            let headers = ["Idempotency-Key": "k"]
            #expect(try await post(endpoints.http, ObjectsAPI.createRequest("a", "x"), headers: headers).status == 200)
            let again = try await post(endpoints.http, ObjectsAPI.createRequest("a", "x"), headers: headers)
            #expect(again.json?["errors"] != nil)  // ran again: the object exists
            #expect(server.idempotentReplays == 0)
        }
    }

    @Test("the ledger forgets the oldest answers beyond its count and its bytes; a released key runs again")
    func ledgerLimits() throws {
        // An answered key holds its answer and its request's body (14 bytes here): "1", "2" and "3" fit in 40
        // bytes, "4" with its 10-byte answer does not fit beside any other.
        let ledger = IdempotencyLedger(capacity: 2, maxBytes: 40)
        let credentials = DevAuthenticator.Credentials()
        func begin(_ key: String, _ query: String = "mutation { m }") -> IdempotencyLedger.Begin {
            ledger.begin(
                key: key, credentials: credentials, body: Array(query.utf8), requests: [.init(query: query)],
                batch: false)
        }
        func run(_ key: String, answer: String) throws {
            guard case .run(let ticket) = begin(key) else { throw GQLError(.invalidValue, "\(key) did not run") }
            ledger.complete(ticket, answer: answer)
        }
        try run("1", answer: "one")
        try run("2", answer: "two")
        guard case .replay("one") = begin("1"), case .replay("two") = begin("2") else {
            Issue.record("not kept")
            return
        }
        try run("3", answer: "three")  // over the count: "1" is forgotten
        guard case .run = begin("1"), case .mismatch = begin("2", "other"), case .inProgress = begin("1") else {
            Issue.record("count limit")
            return
        }
        try run("4", answer: "0123456789")  // over the bytes: all but "4" forgotten
        guard case .run(let ticket) = begin("2"), case .replay = begin("4") else {
            Issue.record("byte limit")
            return
        }
        ledger.release(ticket)
        guard case .run = begin("2") else {
            Issue.record("released key")
            return
        }
        #expect(ledger.replays == 3)
    }

    @Test("keys are told apart by their bytes: é as U+00E9 and as e + U+0301 are two keys, not a replay")
    func ledgerKeysByBytes() throws {
        let ledger = IdempotencyLedger(capacity: 10)
        let credentials = DevAuthenticator.Credentials()
        let query = "mutation { m }"
        func begin(_ key: String) -> IdempotencyLedger.Begin {
            ledger.begin(
                key: key, credentials: credentials, body: Array(query.utf8), requests: [.init(query: query)],
                batch: false)
        }
        guard case .run(let first) = begin("k\u{E9}") else { throw GQLError(.invalidValue, "first did not run") }
        ledger.complete(first, answer: "one")
        guard case .run = begin("ke\u{301}"), case .replay("one") = begin("k\u{E9}") else {
            Issue.record("the decomposed key was taken for the precomposed one")
            return
        }
    }

    @Test("a repeat is compared by its bytes, then as decoded requests: a batch is never its single request")
    func ledgerComparesBodies() throws {
        let ledger = IdempotencyLedger(capacity: 10)
        let credentials = DevAuthenticator.Credentials()
        func begin(_ key: String, _ body: String) throws -> IdempotencyLedger.Begin {
            let bytes = Array(body.utf8)
            let requests: [DevEngine.Request]
            let batch: Bool
            switch HTTPRequestDecoder.decodeBody(bytes) {
            case .success(.single(let request)): (requests, batch) = ([request], false)
            case .success(.batch(let all)): (requests, batch) = (all, true)
            case .failure(let failure): throw GQLError(.invalidJSON, failure.message)
            }
            return ledger.begin(key: key, credentials: credentials, body: bytes, requests: requests, batch: batch)
        }
        let single = #"{"query":"mutation M($a: Int) { m(a: $a) }","variables":{"a":1,"b":"x"}}"#
        guard case .run(let first) = try begin("s", single) else { throw GQLError(.invalidValue, "s did not run") }
        ledger.complete(first, answer: "one")
        // The same bytes; the same request written otherwise; another value; the same request as a batch.
        let reordered = #"{ "variables": {"b": "x", "a": 1}, "query": "mutation M($a: Int) { m(a: $a) }" }"#
        let changed = #"{"query":"mutation M($a: Int) { m(a: $a) }","variables":{"a":2,"b":"x"}}"#
        guard case .replay("one") = try begin("s", single), case .replay("one") = try begin("s", reordered),
            case .mismatch = try begin("s", changed), case .mismatch = try begin("s", "[\(single)]")
        else {
            Issue.record("a single request's key")
            return
        }
        guard case .run(let batch) = try begin("b", "[\(single),\(changed)]") else {
            throw GQLError(.invalidValue, "b did not run")
        }
        ledger.complete(batch, answer: "[1,2]")
        guard case .replay("[1,2]") = try begin("b", "[\(reordered), \(changed)]"),
            case .mismatch = try begin("b", "[\(changed),\(single)]"), case .mismatch = try begin("b", single)
        else {
            Issue.record("a batch's key")
            return
        }
        #expect(ledger.replays == 3)
    }
}
