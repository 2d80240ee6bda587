import Foundation
import GQLCore
import GQLNet
import GQLStore
import GQLTestSupport
import Testing

@testable import GQLSync

/// Delivery against a server that answers a mutation with everything but a GraphQL answer (``HostileServer``): each
/// answer either delivers the item, sets it aside, or keeps it for a retry, and none is taken for delivered unless
/// the server said it applied the mutation.
@Suite(.timeLimit(.minutes(2))) struct HostileAnswerTests {
    /// What became of one item whose every send got `reply`.
    enum Fate: Equatable {
        case sent
        case failed(String)
        case retrying
        /// The status stream ended before any of the three: no outcome, which no test expects.
        case noEvent
    }

    /// The tests' settings: their registry, `input` wrapping, short backoffs.
    static func configuration() throws -> GQLSync.Configuration {
        var configuration = GQLSync.Configuration()
        configuration.queries = try syncTestQueries()
        configuration.inputArgument = "input"
        configuration.backoff = GQLBackoff(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
        return configuration
    }

    static func fate(of reply: HostileServer.Reply, timeout: Duration = .seconds(5)) async throws -> Fate {
        let hostile = try HostileServer { _, _ in reply }
        defer { hostile.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var options = GQLServer.Configuration()
        options.timeout = timeout
        options.maximumResponseSize = 1 << 20
        let client = GQLServer(HTTP: hostile.url, configuration: options)
        let configuration = try Self.configuration()
        let sync = try GQLSync(client, path: directory.path("outbox.sqlite"), configuration: configuration)
        var statuses = sync.status.makeAsyncIterator()
        try await sync.steady("CreateNote", ["n": 1])
        var fate = Fate.noEvent
        search: while let status = await statuses.next() {
            switch status.event {
            case .sent?: fate = .sent
            case .failed(_, let failure)?: fate = .failed(failure.message)
            case .retrying?: fate = .retrying
            default: continue
            }
            break search
        }
        try await sync.shutdown()
        try await client.shutdown()
        return fate
    }

    @Test func anAnswerWithoutDataOrErrorsOfTheRightKindIsNotTakenForDelivered() async throws {
        // `data` that is null, not an object, or an empty object, without errors: the server did not say it
        // applied the mutation. Such an answer is kept for a retry (as a 2xx that is not GraphQL is), never removed.
        for body in [
            #"{"data":null}"#, #"{"data":5}"#, #"{"data":"ok"}"#, #"{"data":[]}"#, #"{"data":true}"#,
            #"{"data":{}}"#, #"{"data":null,"errors":[]}"#, #"{"data":null,"extensions":{}}"#,
        ] {
            let fate = try await Self.fate(of: .json(body))
            #expect(fate == .retrying, "\(body)")
        }
    }

    @Test func anAnswerNamingTheEnginesOwnTablesWritesNothingThere() async throws {
        // Delivered answers are written into the table their field names (`updateNote` → `Note`); a server that
        // names `update_gqlsync_outbox` or `delete_gqlsync_outbox` must not rewrite or delete another engine's item.
        let hostile = try HostileServer { index, _ in
            switch index {
            case 0: .json(#"{"data":{"update_gqlsync_outbox":{"id":1,"input":"{\"n\":666}","state":"failed"}}}"#)
            case 1: .json(#"{"data":{"delete_gqlsync_outbox":{"id":1}}}"#)
            case 2: .json(#"{"data":{"updatesqlite_master":{"name":"x","sql":"DROP TABLE Note"}}}"#)
            default: .json(#"{"data":{"deletegql_migrations":{"namespace":"gqlsync","version":1}}}"#)
            }
        }
        let directory = try TemporaryDirectory()
        let client = GQLServer(HTTP: hostile.url)
        let db = try GQLDatabase(path: directory.path("app.sqlite"))
        var configuration = try Self.configuration()
        configuration.name = "other"
        configuration.delivers = false
        let other = try GQLSync(client, database: db, configuration: configuration)
        let victim = try await other.steady("CreateNote", ["n": 1])
        configuration.name = "main"
        configuration.delivers = true
        let sync = try GQLSync(client, database: db, configuration: configuration)
        for n in 2...5 { try await sync.steady("CreateNote", ["n": n]) }
        try await sync.drain()
        #expect(hostile.requestCount == 4)
        let row = try db.fetchAll(sql: "SELECT input, state FROM _gqlsync_outbox WHERE id = ?", [victim]).first
        #expect(row?["input"] == #"{"n":1}"# && row?["state"] == "pending", "\(row.map { "\($0)" } ?? "gone")")
        #expect(other.pendingCount == 1)
        #expect(try GQLMigrator(namespace: "gqlsync").appliedVersion(db) == OutboxStore.migrator.steps.count)
        try await sync.shutdown()
        try await other.shutdown()
        hostile.stop()
        try await client.shutdown()
        try await db.close()
        directory.cleanup()
    }

    @Test func aDeliveredAnswerStillCountsAsDelivered() async throws {
        #expect(try await Self.fate(of: .json(#"{"data":{"createNote":{"id":"a","n":1}}}"#)) == .sent)
        // Errors beside data: applied, with a partial failure.
        let partial =
            #"{"data":{"createNote":{"id":"a","n":null}},"errors":[{"message":"n","path":["createNote","n"]}]}"#
        #expect(try await Self.fate(of: .json(partial)) == .sent)
        // A nullable mutation field may answer null without an error: the mutation ran.
        #expect(try await Self.fate(of: .json(#"{"data":{"createNote":null}}"#)) == .sent)
    }

    @Test func answersThatAreNotGraphQLAreRetried() async throws {
        for reply: HostileServer.Reply in [
            .json("<html>portal</html>"), .json(#"{"data":{"createNote":{"id":"#), .json(""),
            .json(String(repeating: "[", count: 100_000)), .json(#"{"errors":[{}]}"#),
            .json(#"{"errors":[{"message":null}]}"#), .json(#"{"errors":"bad"}"#),
            .http(503, "busy"), .http(429, "slow down", headers: ["Retry-After: 0"]),
            .http(429, "", headers: ["Retry-After: -5"]), .http(503, "", headers: ["Retry-After: 1000000000000"]),
            .http(503, "", headers: ["Retry-After: Wed, 21 Oct 2015 07:28:00 GMT"]),
            .http(503, "", headers: ["Retry-After: soon"]), .raw(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)),
            .raw([]), .raw(Array("garbage\r\n\r\n".utf8)),
        ] {
            #expect(try await Self.fate(of: reply) == .retrying, "\(reply)")
        }
    }

    @Test func answersOfTheWrongLengthAreRetried() async throws {
        for reply: HostileServer.Reply in [
            .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"data\":{}}".utf8)),
            .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}".utf8)),
            .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}".utf8)),
            .raw(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8)),
        ] {
            #expect(try await Self.fate(of: reply) == .retrying, "\(reply)")
        }
    }

    @Test func anAnswerLargerThanTheLimitIsSetAsideNotHeldInMemory() async throws {
        // 2 MiB against the 1 MiB limit of `fate`: refused before it is read whole; the mutation may have run, so
        // the item is set aside for the app, not sent again on its own.
        let body = #"{"data":{"createNote":{"id":""# + String(repeating: "x", count: 2 << 20) + #""}}}"#
        guard case .failed(let message) = try await Self.fate(of: .json(body)) else {
            Issue.record("a 2 MiB answer was not set aside")
            return
        }
        #expect(message.contains("larger than the 1048576-byte maximum"), "\(message)")
    }

    @Test(arguments: [503, 429])
    func aServerThatRefusesForEverIsAskedWithBackoffNotInALoop(status: Int) async throws {
        // Retry-After 0 on every answer: the engine's own backoff (20 ms growing to 200 ms here) still paces it.
        let hostile = try HostileServer { _, _ in .http(status, "busy", headers: ["Retry-After: 0"]) }
        let directory = try TemporaryDirectory()
        let client = GQLServer(HTTP: hostile.url)
        let configuration = try Self.configuration()
        let sync = try GQLSync(client, path: directory.path("outbox.sqlite"), configuration: configuration)
        let started = ContinuousClock.now
        try await sync.steady("CreateNote", ["n": 1])
        // Asked again (however long a loaded machine holds the engine's timer back: the outcome decides, the suite's
        // time limit bounds a wait gone wrong), and watched 1.5 s at least.
        while hostile.requestCount < 2 {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(until: started + .milliseconds(1500))
        let elapsed = ContinuousClock.now - started
        let count = hostile.requestCount
        // Waits of 20, 40, 80, 160, then 200 ms (jitter shortens one by half at most): after the first five
        // requests, at most one per 100 ms — about 12 in 1.5 s, never a loop.
        #expect(count >= 2, "\(count) requests in \(elapsed)")
        #expect(count <= 5 + Int(elapsed / .milliseconds(100)), "\(count) requests in \(elapsed)")
        #expect(sync.pendingCount == 1)
        #expect(try sync.failedItems().isEmpty)
        try await sync.shutdown()
        hostile.stop()
        try await client.shutdown()
        directory.cleanup()
    }

    @Test func aSocketThatNeverAnswersTimesOutAndIsRetried() async throws {
        // The server never answers, so only a timeout can end the request. The configured 300 ms one, not
        // GQLServer's 30 s default: the bound sits below the default (which cannot fire sooner), not at a guess of
        // the machine's speed, so only a request the default ended fails it.
        let started = ContinuousClock.now
        #expect(try await Self.fate(of: .hang, timeout: .milliseconds(300)) == .retrying)
        #expect(ContinuousClock.now - started < GQLServer.Configuration().timeout, "the default timeout ended it")
    }

    @Test func aRefusalIsSetAsideWithTheServersMessage() async throws {
        guard case .failed(let message) = try await Self.fate(of: .http(400, "no such input")) else {
            Issue.record("a 400 was not set aside")
            return
        }
        #expect(message.hasPrefix("HTTP 400 from http://127.0.0.1:") && message.hasSuffix("no such input"))
    }

    @Test func aRedirectIsNotFollowedAndTheItemWaits() async throws {
        // The server is not usable at this URL: the item is kept (offline), never set aside or sent elsewhere.
        let elsewhere = try HostileServer { _, _ in .json(#"{"data":{"createNote":{"id":"a","n":1}}}"#) }
        for status in [301, 307, 308] {
            #expect(try await Self.fate(of: .redirect(status, to: elsewhere.url)) == .retrying, "\(status)")
        }
        #expect(elsewhere.requestCount == 0)
        elsewhere.stop()
    }

    @Test func aHugeErrorAnswerIsStoredAndReportedSmall() async throws {
        // 3,000 errors of 300 bytes (900 KB, under the 1 MiB limit of the client): the failure keeps the first
        // 5 errors and a message of the first 3, the rest counted.
        let one = #"{"message":""# + String(repeating: "e", count: 280) + #"","path":["createNote"]}"#
        let body = #"{"data":null,"errors":["# + Array(repeating: one, count: 3000).joined(separator: ",") + "]}"
        let hostile = try HostileServer { _, _ in .json(body) }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var options = GQLServer.Configuration()
        options.maximumResponseSize = 1 << 20
        let client = GQLServer(HTTP: hostile.url, configuration: options)
        let sync = try GQLSync(client, path: directory.path("outbox.sqlite"), configuration: try Self.configuration())
        for n in 1...3 { try await sync.steady("CreateNote", ["n": n]) }
        try await sync.drain()
        let failed = try sync.failedItems()
        #expect(failed.count == 3)
        for item in failed {
            #expect(item.failure.errors.count == GQLSync.Failure.errorLimit)
            #expect(item.failure.message.utf8.count < 2000, "\(item.failure.message.utf8.count)")
            #expect(item.failure.message.hasSuffix("(+2997 more errors)"), "\(item.failure.message.suffix(40))")
        }
        try await sync.shutdown()
        try await client.shutdown()
        hostile.stop()
    }

    @Test func aFailureMessageIsCappedWithTheRestCounted() {
        let long = String(repeating: "é", count: 5000)  // 10,000 bytes; a cut may not split a character
        var failure = GQLSync.Failure(message: long)
        #expect(failure.message.utf8.count <= GQLSync.Failure.messageLimit + 32)
        #expect(failure.message.hasSuffix("… (+5904 bytes)"), "\(failure.message.suffix(20))")
        #expect(failure.message.hasPrefix(String(repeating: "é", count: 2048)))
        failure.message = "gave up: " + long
        #expect(failure.message.utf8.count <= GQLSync.Failure.messageLimit + 32)
        let errors = (0..<100).map { _ in
            GQLResult.Error(message: String(repeating: "x", count: 10_000), path: [.key("f")])
        }
        failure = GQLSync.Failure(message: "m", errors: errors)
        #expect(failure.errors.count == 5)
        #expect(failure.errors.allSatisfy { $0.message.utf8.count <= GQLSync.Failure.messageLimit + 32 })
        #expect(GQLSync.Failure(message: "short").message == "short")
    }
}
