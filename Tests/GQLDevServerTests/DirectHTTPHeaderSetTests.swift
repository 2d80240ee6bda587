import Foundation
import GQLCore
import Testing

@testable import GQLDevServer

/// The header sets real clients send — wrk's bare request, a Python `requests` session's, a browser page's with an
/// allowed origin — take the direct path (``DirectRequestParser``, ``DirectHTTPHandler``) and get, byte for byte,
/// the answers of the router's path, CORS headers included; an origin that is not allowed, and every malformed
/// variant of each set, get what NIO's parser and the router give them.
@Suite("Real clients' header sets on the direct path", .serialized, .timeLimit(.minutes(3)))
struct DirectHTTPHeaderSetTests {
    static let allowed = "http://app.example"
    static let refused = "http://evil.example"

    /// A request's header lines (without `Content-Length`, which ``request(_:_:)`` adds last).
    enum HeaderSet: String, CaseIterable, CustomStringConvertible {
        case bare, python, browser, refusedOrigin

        var description: String { rawValue }

        var lines: [String] {
            switch self {
            case .bare:
                return ["Host: 127.0.0.1", "Content-Type: application/json"]
            case .python:
                return [
                    "Host: 127.0.0.1", "User-Agent: python-requests/2.32.3", "Accept-Encoding: gzip, deflate",
                    "Accept: */*", "Connection: keep-alive", "Content-Type: application/json",
                ]
            case .browser, .refusedOrigin:
                return [
                    "Host: 127.0.0.1:4000", "Connection: keep-alive",
                    #"sec-ch-ua: "Chromium";v="131", "Not_A Brand";v="24""#, "sec-ch-ua-mobile: ?0",
                    "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                        + "Chrome/131.0.0.0 Safari/537.36",
                    "Content-Type: application/json", "Accept: */*",
                    "Origin: \(self == .browser ? DirectHTTPHeaderSetTests.allowed : DirectHTTPHeaderSetTests.refused)",
                    "Sec-Fetch-Site: cross-site", "Sec-Fetch-Mode: cors", "Sec-Fetch-Dest: empty",
                    "Referer: http://app.example/", "Accept-Encoding: gzip, deflate, br, zstd",
                    "Accept-Language: en-US,en;q=0.9",
                ]
            }
        }
    }

    static func request(_ set: HeaderSet, _ body: String, extra: [String] = []) -> String {
        "POST /graphql HTTP/1.1\r\n" + (set.lines + extra).map { $0 + "\r\n" }.joined()
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    static func query(_ text: String) throws -> String {
        try GQLValue.object(["query": .string(text)]).jsonString()
    }

    static var configuration: GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.allowedOrigins = [allowed]
        return configuration
    }

    // MARK: The reader

    @Test(
        "the reader takes each set whole, with the origin for the handler to decide on", arguments: HeaderSet.allCases)
    func readerTakesEachSet(_ set: HeaderSet) {
        let body = DirectRequestParserTests.body
        let text = Self.request(set, body)
        guard case .request(let request) = DirectRequestParserTests.parse(text) else {
            Issue.record("\(set) not read")
            return
        }
        #expect(request.totalBytes == text.utf8.count)
        #expect(!request.simpleContentType)  // application/json
        switch set {
        case .bare, .python: #expect(request.origin == nil)
        case .browser: #expect(DirectRequestParserTests.value(request.origin, in: text) == Self.allowed)
        case .refusedOrigin: #expect(DirectRequestParserTests.value(request.origin, in: text) == Self.refused)
        }
    }

    @Test(
        "a Connection other than keep-alive, or a second Origin or Connection, is the usual parser's",
        arguments: [
            ["Connection: close"], ["Connection: keep-alive, Upgrade"], ["Connection: Upgrade"], ["Connection:"],
            ["Connection: keep-alive", "Connection: keep-alive"],
            ["Origin: http://a.example", "Origin: http://a.example"],
            ["Origin: http://a.example b"], ["Origin:"], ["Origin: http://a.\texample"],
        ])
    func readerRefusesOddConnectionAndOrigin(_ extra: [String]) {
        let text = Self.request(.bare, DirectRequestParserTests.body, extra: extra)
        guard case .other = DirectRequestParserTests.parse(text) else {
            Issue.record("taken: \(extra)")
            return
        }
    }

    @Test("KEEP-ALIVE in any case is taken")
    func keepAliveInAnyCase() {
        let text = Self.request(.bare, DirectRequestParserTests.body, extra: ["connection: KEEP-Alive"])
        guard case .request = DirectRequestParserTests.parse(text) else {
            Issue.record("not read")
            return
        }
    }

    // MARK: On a server

    @Test("every set's queries, mutations and refusals stay on the direct path; a refused origin hands over")
    func setsStayOnTheDirectPath() async throws {
        for set in HeaderSet.allCases {
            let lines = LogLines()
            try await withDevServer(Self.configuration, logger: lines.logger) { _, endpoints in
                let wire = try AttackWire(port: try HostileHTTPTests.port(endpoints))
                let requests = [
                    Self.request(set, try Self.query("{ listObjects { nextToken } }")),
                    Self.request(
                        set,
                        try Self.query(#"mutation { createObjects(input: {objectId: "p", text: "t"}) { objectId } }"#)),
                    Self.request(set, try Self.query(#"{ getObjects(objectId: "p") { objectId } }"#)),
                    Self.request(set, try Self.query("{ nope }")),
                ]
                await wire.send(requests.joined())
                let answers = await wire.receive(responses: 4).responses
                if set == .refusedOrigin {
                    #expect(answers.map(\.status) == [403, 403, 403, 403])
                } else {
                    #expect(answers.map(\.status) == [200, 200, 200, 200], "\(set)")
                    #expect(answers[1].body == #"{"data":{"createObjects":{"objectId":"p"}}}"#, "\(set)")
                }
            }
            let handedOver = lines.lines.filter { $0.contains("handed to the usual path") }.count
            #expect(handedOver == (set == .refusedOrigin ? 1 : 0), "\(set): \(lines.lines)")
        }
    }

    @Test("each set gets the router's answers byte for byte, CORS headers included")
    func setsMatchTheRouter() async throws {
        try await DirectHTTPAttackTests.withServers(Self.configuration) { direct, reference in
            for set in HeaderSet.allCases {
                let bytes = Array(
                    (Self.request(set, try Self.query("{ listObjects { nextToken } }"))
                        + Self.request(
                            set,
                            try Self.query(
                                #"mutation { createObjects(input: {objectId: "\#(set)", text: "t"}) { objectId } }"#))
                        + Self.request(set, try Self.query(#"{ getObjects(objectId: "\#(set)") { objectId } }"#))
                        + Self.request(set, try Self.query("{ nope }"))
                        + Self.request(set, #"{"query":"#)).utf8)
                let viaDirect = try await DirectHTTPAttackTests.exchange(direct, bytes)
                let viaRouter = try await DirectHTTPAttackTests.exchange(reference, bytes)
                #expect(viaDirect.0.count == 5, "\(set): \(viaDirect.0)")
                #expect(viaDirect.0 == viaRouter.0, "\(set): direct \(viaDirect.0) router \(viaRouter.0)")
                if set == .browser {
                    #expect(viaDirect.0.allSatisfy { $0.header("Access-Control-Allow-Origin") == Self.allowed })
                    #expect(viaDirect.0.allSatisfy { $0.header("Vary") == "Origin" })
                }
            }
        }
    }

    /// Malformed variants of `set`'s request, each followed (where a request may follow) by the set's plain one.
    static func malformed(_ set: HeaderSet) throws -> [(String, [UInt8])] {
        let body = DirectHTTPAttackTests.listBody
        let n = body.utf8.count
        let plain = request(set, body)
        let head = "POST /graphql HTTP/1.1\r\n" + set.lines.map { $0 + "\r\n" }.joined()
        let chunked = String(n, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
        let folded = set.lines.enumerated().map { index, line in index == 1 ? line + "\r\n\tfolded" : line }
        let bareLF = "POST /graphql HTTP/1.1\n" + set.lines.map { $0 + "\n" }.joined() + "Content-Length: \(n)\n\n"
        let cases: [(String, String)] = [
            ("duplicate Content-Length", head + "Content-Length: \(n)\r\nContent-Length: \(n)\r\n\r\n" + body),
            ("different Content-Lengths", head + "Content-Length: \(n)\r\nContent-Length: 3\r\n\r\n" + body),
            (
                "Transfer-Encoding with Content-Length",
                head + "Transfer-Encoding: chunked\r\nContent-Length: \(n)\r\n\r\n" + chunked
            ),
            (
                "Content-Length with Transfer-Encoding",
                head + "Content-Length: \(n)\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
            ),
            (
                "obs-fold",
                "POST /graphql HTTP/1.1\r\n" + folded.map { $0 + "\r\n" }.joined() + "Content-Length: \(n)\r\n\r\n"
                    + body
            ),
            ("header line of 9000 bytes", request(set, body, extra: ["X-Pad: " + String(repeating: "p", count: 9000)])),
            (
                "header block of 100 KB",
                request(set, body, extra: Array(repeating: "X-Pad: " + String(repeating: "p", count: 1000), count: 100))
            ),
            ("bare LF", bareLF + body),
            ("bare LF ending the block", head + "Content-Length: \(n)\r\n\n" + body),
            ("pipelined, three", plain + plain + plain),
            ("pipelined, a GET between", plain + DirectHTTPTests.get + plain),
            ("pipelined, a malformed one between", plain + head + "Content-Length: -1\r\n\r\n" + plain),
        ]
        return cases.map { ($0.0, Array(($0.1 + plain).utf8)) }
    }

    @Test("malformed variants of each set are refused or answered as NIO's parser and the router do")
    func malformedVariantsMatchTheRouter() async throws {
        try await DirectHTTPAttackTests.withServers(Self.configuration) { direct, reference in
            for set in HeaderSet.allCases {
                for (name, bytes) in try Self.malformed(set) {
                    let viaDirect = try await DirectHTTPAttackTests.exchange(direct, bytes)
                    let viaRouter = try await DirectHTTPAttackTests.exchange(reference, bytes)
                    #expect(!viaDirect.0.isEmpty, "\(set), \(name): no answer")
                    #expect(viaDirect.0 == viaRouter.0, "\(set), \(name): direct \(viaDirect.0) router \(viaRouter.0)")
                    #expect(viaDirect.closed && viaRouter.closed, "\(set), \(name): not closed")
                }
            }
        }
    }
}
