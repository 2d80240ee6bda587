import Foundation
import GQLCore
import GQLTestSupport
import Logging
import Testing

@testable import GQLDevServer

/// POSTs that a compiled plan runs are answered on the connection's event loop (``PlannedHTTPHandler``); every
/// other request goes through Hummingbird's router. Both must answer alike, in request order, under every rule
/// the router applies.
@Suite("GQLDevServer answers planned POSTs on the event loop", .timeLimit(.minutes(1)))
struct ServerPlannedHTTPTests {
    /// A sequence of requests that covers what a plan answers (get, list, sync, create, update with a stale
    /// version, delete, aliases, `__typename`, variables, errors) and what it leaves to the executor.
    static let sequence: [GQLValue] = [
        ["query": .string(ObjectsAPI.create), "variables": ["input": ["objectId": "a", "text": "one"]]],
        ["query": "mutation { createObjects(input: {objectId: \"b\", text: \"two\", number: 2}) { objectId number } }"],
        ["query": "mutation { createObjects(input: {objectId: \"a\"}) { objectId } }"],  // exists: an error
        ["query": .string(ObjectsAPI.get), "variables": ["id": "a"]],
        [
            "query": .string(
                #"{ x: getObjects(objectId: "b") { __typename n: number _version } "#
                    + #"missing: getObjects(objectId: "z") { objectId } }"#)
        ],
        ["query": "mutation { updateObjects(input: {objectId: \"a\", text: \"uno\", _version: 7}) { objectId } }"],
        [
            "query": .string(
                #"mutation { updateObjects(input: {objectId: "a", text: "uno", _version: 1}) "#
                    + "{ text _version updatedAt } }")
        ],
        ["query": "{ listObjects(limit: 1) { items { objectId text } nextToken } }"],
        ["query": "{ syncObjects { items { objectId _deleted } startedAt } }"],
        ["query": "mutation { deleteObjects(input: {objectId: \"b\"}) { objectId _deleted } }"],
        ["query": "{ getObjects(objectId: \"a\") { ... on Objects { objectId } } }"],  // the executor's
        ["query": "{ getObjects(objectId: 1.5) { objectId } }"],  // invalid
        ["query": .string(ObjectsAPI.get)],  // a missing variable
        ["query": .string(String(repeating: "{ a ", count: 40) + String(repeating: "} ", count: 40))],  // too deep
        ["query": "{ getObjects(objectId: \"a\") { objectId }"],  // unparsable
        [  // two mutations: the router's
            "query": .string(
                #"mutation { c: createObjects(input: {objectId: "c"}) { objectId } "#
                    + #"d: deleteObjects(input: {objectId: "c"}) { _deleted } }"#)
        ],
    ]

    @Test("the event loop's answers equal the router's, byte for byte, for the same requests on the same clock")
    func sameAnswersAsTheRouter() async throws {
        var configuration = GQLDevServer.Configuration()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        configuration.clock = { start }
        var answers: [[String]] = []
        for routed in [false, true] {
            let headers = routed ? [usualPathConnection.name: usualPathConnection.value] : [:]
            let log = LogLines()
            answers.append(
                try await withDevServer(configuration, logger: log.logger) { _, endpoints in
                    var texts: [String] = []
                    var statuses: [Int] = []
                    for request in Self.sequence {
                        let outcome = try await httpRequest(
                            endpoints.http, body: try request.jsonString(), headers: headers)
                        statuses.append(outcome.status)
                        #expect(outcome.headers["content-type"] == "application/json; charset=utf-8")
                        #expect(outcome.headers["server"] == "GQLDevServer" && outcome.headers["date"] != nil)
                        texts.append(outcome.text)
                    }
                    // Every answer 200 but the too-deep document's, refused as over a limit (400) by either path.
                    #expect(statuses == Self.sequence.indices.map { $0 == Self.sequence.count - 3 ? 400 : 200 })
                    return texts
                })
            let onLoop = log.lines.filter { $0.hasSuffix("(answered on the event loop)") }.count
            // Every request but the executor's, the one with a missing variable and the one with two mutations
            // (the invalid, too deep and unparsable documents are refused on the loop).
            #expect(onLoop == (routed ? 0 : Self.sequence.count - 3), "\(log.lines)")
        }
        #expect(answers[0] == answers[1])
        #expect(answers[0][3] == #"{"data":{"getObjects":{"objectId":"a","text":"one"}}}"#)
        #expect(answers[0][2].contains("already exists"))
    }

    @Test("pipelined requests are answered in order when the router has one of them")
    func pipelinedOrder() async throws {
        try await withDevServer { _, endpoints in
            _ = try await post(endpoints.http, ObjectsAPI.createRequest("p", "text"))
            let port = try #require(URL(string: endpoints.http)?.port)
            let connection = try RawConnection(port: port)
            func request(_ query: String, close: Bool = false) throws -> String {
                let body = try GQLValue.object(["query": .string(query)]).jsonString()
                return "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\(close ? "Connection: close\r\n" : "")\r\n\(body)"
            }
            // The executor's request first (the router), then two a plan answers, all in one write.
            await connection.send(
                try request(#"{ getObjects(objectId: "p") { ... on Objects { objectId } } }"#)
                    + request(#"{ getObjects(objectId: "p") { text } }"#)
                    + request(#"{ n: getObjects(objectId: "p") { objectId } }"#, close: true))
            let reply = await connection.readUntilClosed()
            #expect(reply.closed)
            let bodies = reply.text.components(separatedBy: "\r\n\r\n").dropFirst().map {
                $0.components(separatedBy: "HTTP/1.1").first ?? ""
            }
            #expect(
                bodies == [
                    #"{"data":{"getObjects":{"objectId":"p"}}}"#, #"{"data":{"getObjects":{"text":"text"}}}"#,
                    #"{"data":{"n":{"objectId":"p"}}}"#,
                ])
        }
    }

    @Test("a chunked body and a body over the held size are answered too")
    func chunkedAndLargeBodies() async throws {
        try await withDevServer { _, endpoints in
            _ = try await post(endpoints.http, ObjectsAPI.createRequest("c", "text"))
            let port = try #require(URL(string: endpoints.http)?.port)
            let body = #"{"query":"{ getObjects(objectId: \"c\") { objectId text } }"}"#
            let half = body.utf8.count / 2
            let first = String(body.prefix(half))
            let second = String(body.dropFirst(half))
            let connection = try RawConnection(port: port)
            await connection.send(
                "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n"
                    + String(first.utf8.count, radix: 16) + "\r\n" + first + "\r\n")
            await connection.send(
                String(second.utf8.count, radix: 16) + "\r\n" + second + "\r\n0\r\n\r\n"
                    + "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 2\r\nConnection: close\r\n\r\n{}")
            let reply = await connection.readUntilClosed()
            #expect(reply.status == 200)
            #expect(reply.text.contains(#"{"data":{"getObjects":{"objectId":"c","text":"text"}}}"#))
            #expect(reply.text.contains("The request has no query."))
            // 100 KiB of spaces in the document: more than the handler holds, so the router answers it.
            let padded = "{ getObjects(objectId: \"c\") { objectId " + String(repeating: " ", count: 100_000) + "} }"
            let outcome = try await post(endpoints.http, ["query": .string(padded)])
            #expect(outcome.json == ["data": ["getObjects": ["objectId": "c"]]])
        }
    }

    @Test("the rules the router applies hold on the event loop: credentials, origins, browser content types")
    func rulesHold() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "secret"
        try await withDevServer(configuration) { _, endpoints in
            let get = try GQLValue.object(["query": .string(ObjectsAPI.get), "variables": ["id": "a"]]).jsonString()
            #expect(try await httpRequest(endpoints.http, body: get).status == 401)
            #expect(try await httpRequest(endpoints.http, body: get, headers: ["x-api-key": "wrong"]).status == 401)
            let allowed = try await httpRequest(endpoints.http, body: get, headers: ["x-api-key": "secret"])
            #expect(allowed.status == 200 && allowed.json == ["data": ["getObjects": .null]])
            let origin = try await httpRequest(
                endpoints.http, body: get, headers: ["x-api-key": "secret", "Origin": "http://evil.example"])
            #expect(origin.status == 403)
        }
        try await withDevServer { _, endpoints in
            let create = #"{"query":"mutation { createObjects(input: {objectId: \"csrf\"}) { objectId } }"}"#
            let simple = try await httpRequest(
                endpoints.http, body: create, headers: ["Content-Type": "text/plain"], contentType: nil)
            #expect(simple.status == 400)
            #expect(try await post(endpoints.http, ["query": .string(ObjectsAPI.list)]).json == ObjectsAPI.listed([]))
        }
    }

    @Test("a repeated Content-Type goes to the router, which decides on the two values joined")
    func repeatedContentType() async throws {
        let log = LogLines()
        try await withDevServer(logger: log.logger) { _, endpoints in
            let port = try #require(URL(string: endpoints.http)?.port)
            let body = #"{"query":"mutation { createObjects(input: {objectId: \"twice\"}) { objectId } }"}"#
            let connection = try RawConnection(port: port)
            await connection.send(
                "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            let reply = await connection.readUntilClosed(timeout: 2)  // the answer, then 2 s of nothing
            #expect(reply.status != nil)
            #expect(!log.lines.contains { $0.hasSuffix("(answered on the event loop)") }, "\(log.lines)")
        }
    }

    @Test("a store commits on the caller's thread only while its write queue is idle and the writer is free")
    func writesOnTheLoopOnlyWhenQuiet() async throws {
        let fixture = try EngineFixture()
        let model = try #require(try ModelParser.parse(ModelParser.defaultSDL, maxNesting: 8).models.first)
        let writes = WriteQueue(database: fixture.db)
        let store = ModelStore(model: model, database: fixture.db, writes: writes)
        #expect(try store.commitNow(store.mutation(.create, ["objectId": "now"], condition: nil))?["objectId"] == "now")
        let gate = Gate()
        await writes.hold(gate)
        #expect(!writes.isQuiet)
        #expect(try store.commitNow(store.mutation(.create, ["objectId": "handed-on"], condition: nil)) == nil)
        gate.release()
        #expect(try store.get(.string("handed-on")) == nil)
        let later = try store.mutation(.create, ["objectId": "later"], condition: nil)
        #expect(try await store.commit(later)["objectId"] == "later")
        #expect(await waitUntil { writes.isQuiet })
        // The writer held by another thread: not committed on the caller's thread either.
        let held = Gate()
        let holder = Thread {
            try? fixture.db.write { _ in held.enter() }
        }
        holder.start()
        await held.waitUntilEntered()
        #expect(try store.commitNow(store.mutation(.create, ["objectId": "busy"], condition: nil)) == nil)
        held.release()
    }

    /// Sends a GET on `connection` and reads its answer: from then on the connection's requests take the usual path
    /// (``PlannedHTTPHandler``) instead of the direct one (``DirectHTTPHandler``).
    static func handOver(_ connection: RawConnection) async {
        await connection.send(DirectHTTPTests.get)
        #expect(await connection.readAnswers(1).map(\.status) == [200])
    }

    @Test(
        "a mutation queued while the writer is busy is answered once committed, and the connection's later requests after it",
        arguments: [false, true])
    func queuedMutationKeepsOrder(handedOver: Bool) async throws {
        try await withDevServer { server, endpoints in
            let database = try #require(server.devEngine?.database)
            let port = try #require(URL(string: endpoints.http)?.port)
            func request(_ query: String, close: Bool = false) throws -> String {
                let body = try GQLValue.object(["query": .string(query)]).jsonString()
                return "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\(close ? "Connection: close\r\n" : "")\r\n\(body)"
            }
            let held = Gate()
            let holder = Thread {
                try? database.write { _ in held.enter() }
            }
            let connection = try RawConnection(port: port)
            if handedOver { await Self.handOver(connection) }
            holder.start()
            await held.waitUntilEntered()
            await connection.send(
                try request(#"mutation { createObjects(input: {objectId: "q", text: "queued"}) { objectId text } }"#)
                    + request(#"{ getObjects(objectId: "q") { text } }"#)
                    + request(#"{ n: getObjects(objectId: "q") { objectId } }"#, close: true))
            let early = await connection.readUntilClosed(timeout: 1)
            #expect(early.text.isEmpty, "answered while the writer was held: \(early.text)")
            held.release()
            let reply = await connection.readUntilClosed()
            #expect(reply.closed)
            let bodies = (early.text + reply.text).components(separatedBy: "\r\n\r\n").dropFirst().map {
                $0.components(separatedBy: "HTTP/1.1").first ?? ""
            }
            #expect(
                bodies == [
                    #"{"data":{"createObjects":{"objectId":"q","text":"queued"}}}"#,
                    #"{"data":{"getObjects":{"text":"queued"}}}"#, #"{"data":{"n":{"objectId":"q"}}}"#,
                ])
        }
    }

    @Test(
        "a client's half-close after a queued mutation does not cost it the mutation's or later answers",
        arguments: [false, true])
    func halfCloseAfterQueuedMutation(handedOver: Bool) async throws {
        try await withDevServer { server, endpoints in
            let database = try #require(server.devEngine?.database)
            let port = try #require(URL(string: endpoints.http)?.port)
            func request(_ query: String) throws -> String {
                let body = try GQLValue.object(["query": .string(query)]).jsonString()
                return "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
            let connection = try RawConnection(port: port)
            if handedOver { await Self.handOver(connection) }
            let held = Gate()
            Thread { try? database.write { _ in held.enter() } }.start()
            await held.waitUntilEntered()
            await connection.send(
                try request(#"mutation { createObjects(input: {objectId: "h", text: "half"}) { objectId } }"#)
                    + request(#"{ getObjects(objectId: "h") { text } }"#))
            connection.shutdownWrite()
            let early = await connection.readUntilClosed(timeout: 1)
            #expect(early.text.isEmpty, "answered while the writer was held: \(early.text)")
            held.release()
            let reply = await connection.readUntilClosed()
            let bodies = (early.text + reply.text).components(separatedBy: "\r\n\r\n").dropFirst().map {
                $0.components(separatedBy: "HTTP/1.1").first ?? ""
            }
            #expect(
                bodies == [
                    #"{"data":{"createObjects":{"objectId":"h"}}}"#, #"{"data":{"getObjects":{"text":"half"}}}"#,
                ])
        }
    }

    @Test("a batch's consecutive mutations commit in one group, in order, and a query after them sees them")
    func batchedMutationsCommitTogether() async throws {
        try await withDevServer { server, endpoints in
            let engine = try #require(server.devEngine)
            #expect(await waitUntil { engine.writes.isQuiet })
            let before = engine.writes.transactions
            let batch: GQLValue = [
                ["query": #"mutation { createObjects(input: {objectId: "b1", text: "one"}) { objectId text } }"#],
                ["query": #"mutation { createObjects(input: {objectId: "b2", text: "two"}) { objectId } }"#],
                ["query": #"mutation { createObjects(input: {objectId: "b1"}) { objectId } }"#],  // taken
                [
                    "query":
                        #"mutation { updateObjects(input: {objectId: "b2", text: "deux", _version: 1}) { text _version } }"#
                ],
                ["query": "{ listObjects { items { objectId text } } }"],
                ["query": #"mutation { deleteObjects(input: {objectId: "b1"}) { _deleted } }"#],
            ]
            // The worker held until the batch's first four mutations are queued, so they form one group.
            let gate = Gate()
            await engine.writes.hold(gate)
            let posted = Task { try await post(endpoints.http, batch) }
            #expect(await waitUntil { engine.writes.queued == 4 })
            gate.release()
            let outcome = try await posted.value
            #expect(outcome.status == 200)
            let answers = try #require(outcome.json?.arrayValue)
            #expect(answers.count == 6)
            #expect(answers[0] == ["data": ["createObjects": ["objectId": "b1", "text": "one"]]])
            #expect(answers[1] == ["data": ["createObjects": ["objectId": "b2"]]])
            #expect(answers[2]["data"]?["createObjects"] == .null)
            #expect(answers[2]["errors"]?[0]?["message"]?.stringValue?.contains("already exists") == true)
            #expect(answers[3] == ["data": ["updateObjects": ["text": "deux", "_version": 2]]])
            #expect(
                answers[4] == [
                    "data": [
                        "listObjects": [
                            "items": [["objectId": "b1", "text": "one"], ["objectId": "b2", "text": "deux"]]
                        ]
                    ]
                ])
            #expect(answers[5] == ["data": ["deleteObjects": ["_deleted": true]]])
            // The gate's transaction, the first four in one, the delete after the query in another.
            #expect(engine.writes.transactions - before == 3)
        }
    }

    @Test("the Date header is RFC 9110's fixed format")
    func httpDate() {
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(1_795_000_000) == "Wed, 18 Nov 2026 11:06:40 GMT")
    }
}

/// A swift-log handler that keeps every message, for tests that read what the server logged.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }

    var logger: Logger {
        Logger(label: "test") { _ in Handler(sink: self) }
    }

    fileprivate func append(_ line: String) { lock.withLock { stored.append(line) } }

    private struct Handler: LogHandler {
        let sink: LogLines
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.append(event.message.description)
        }
    }
}
