import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLDevServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP connection to 127.0.0.1 that sends exact bytes (NUL, bare CR, bytes over 0x7F), with a bounded send,
/// a chosen receive buffer, and replies split into whole responses with their header lines.
final class AttackWire: Sendable {
    private let descriptor: Int32

    /// One HTTP/1.1 response as it came over the wire.
    struct Response: Sendable, Equatable, CustomStringConvertible {
        var statusLine: String
        var headers: [String]
        var body: String

        var status: Int { Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0 }

        func header(_ name: String) -> String? {
            headers.first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }

        /// The response with its `Date` value blanked, for comparing two servers' answers.
        var normalized: Response {
            var copy = self
            copy.headers = headers.map { $0.lowercased().hasPrefix("date:") ? "Date: *" : $0 }
            return copy
        }

        var description: String { ([statusLine] + headers).joined(separator: " | ") + " || " + body.prefix(300) }
    }

    /// What arrived before the server closed the connection or the time ran out.
    struct Received: Sendable {
        var bytes: [UInt8]
        /// End of stream or reset.
        var closed: Bool
        var responses: [Response] { AttackWire.responses(in: bytes) }
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = try RawConnection.connect(port: port, receiveBuffer: receiveBuffer, noDelay: true)
    }

    deinit { close(descriptor) }

    /// Sends `bytes`; returns how many were sent before an error or `timeout` seconds of a full send buffer.
    @discardableResult
    func send(_ bytes: [UInt8], timeout: Int = 10) async -> Int {
        await onThread { [descriptor] in RawConnection.send(descriptor, bytes, timeout: timeout) }
    }

    @discardableResult
    func send(_ text: String) async -> Int { await send(Array(text.utf8)) }

    func shutdownWrite() { RawConnection.shutdownWrite(descriptor) }

    /// Reads until the server closes, `count` whole responses arrived (when given), or `timeout` seconds pass
    /// without data.
    func receive(responses count: Int? = nil, timeout: Double = 10) async -> Received {
        await onThread { [descriptor] in
            var limit = timeval(tv_sec: Int(timeout), tv_usec: Int(timeout.truncatingRemainder(dividingBy: 1) * 1e6))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var complete = 0
            while true {
                if let count, complete >= count { return Received(bytes: received, closed: false) }
                let read = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read > 0 {
                    received += chunk[0..<read]
                    if count != nil { complete = Self.responseCount(in: received) }
                } else {
                    return Received(bytes: received, closed: read == 0 || errno == ECONNRESET)
                }
            }
        }
    }

    /// How many whole responses `bytes` starts with (without building them).
    static func responseCount(in bytes: [UInt8]) -> Int {
        var count = 0
        var start = 0
        while let (bodyStart, length) = frame(bytes, from: start), bodyStart + length <= bytes.count {
            count += 1
            start = bodyStart + length
        }
        return count
    }

    /// The header block's end and the body length of the response starting at `start`.
    private static func frame(_ bytes: [UInt8], from start: Int) -> (bodyStart: Int, length: Int)? {
        guard start < bytes.count else { return nil }
        var index = start
        var length = 0
        var lineStart = start
        while index + 1 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A {
                if index == lineStart { return (index + 2, length) }
                let line = String(decoding: bytes[lineStart..<index], as: UTF8.self).lowercased()
                if line.hasPrefix("content-length:") {
                    length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        return nil
    }

    static func responses(in bytes: [UInt8]) -> [Response] {
        var responses: [Response] = []
        var start = 0
        while let (bodyStart, length) = frame(bytes, from: start), bodyStart + length <= bytes.count {
            let head = String(decoding: bytes[start..<(bodyStart - 4)], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst()
            responses.append(
                Response(
                    statusLine: statusLine, headers: lines,
                    body: String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)))
            start = bodyStart + length
        }
        return responses
    }
}

/// Attacks on ``DirectHTTPHandler`` and ``DirectRequestParser`` from a hostile client, on real servers: each
/// answer of the direct path must match what the usual path (Hummingbird's router) answers for the same bytes,
/// nothing may be lost or reordered, and nothing may hold the server.
@Suite("Hostile clients against the direct HTTP path", .serialized, .timeLimit(.minutes(3)))
struct DirectHTTPAttackTests {
    static let listBody = #"{"query":"{ listObjects { nextToken } }"}"#
    static let listAnswer = #"{"data":{"listObjects":{"nextToken":null}}}"#

    static func post(_ body: String, headers: String = "Content-Type: application/json\r\n") -> String {
        "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func query(_ text: String, headers: String = "Content-Type: application/json\r\n") throws -> String {
        post(try GQLValue.object(["query": .string(text)]).jsonString(), headers: headers)
    }

    static func port(_ endpoints: GQLDevServer.Endpoints) throws -> Int {
        try HostileHTTPTests.port(endpoints)
    }

    /// Runs `body` with a server taking the direct path and a reference server of the same configuration on which
    /// every request goes through the router (fault injection of a 1 ms latency turns both fast paths off).
    static func withServers(
        _ configuration: GQLDevServer.Configuration = .init(),
        _ body: (_ direct: Int, _ reference: Int) async throws -> Void
    ) async throws {
        var reference = configuration
        reference.faults.latencyMilliseconds = 1
        try await withDevServer(configuration) { _, directEndpoints in
            try await withDevServer(reference) { _, referenceEndpoints in
                try await body(try port(directEndpoints), try port(referenceEndpoints))
            }
        }
    }

    /// Sends `bytes` then half-closes, and returns every response until the server closes (or 5 s of silence).
    static func exchange(_ port: Int, _ bytes: [UInt8]) async throws -> ([AttackWire.Response], closed: Bool) {
        let wire = try AttackWire(port: port)
        await wire.send(bytes)
        wire.shutdownWrite()
        let received = await wire.receive(timeout: 5)
        return (received.responses.map(\.normalized), received.closed)
    }

    // MARK: Same answers as the router

    struct Shape: Sendable, CustomStringConvertible {
        var description: String
        var bytes: [UInt8]
        /// Whether a plain request follows it on the connection.
        var probe = true

        init(_ description: String, probe: Bool = true, _ parts: [UInt8]...) {
            self.description = description
            self.bytes = parts.flatMap { $0 }
            self.probe = probe
        }
    }

    static func b(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let head = "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    static let json = "Content-Type: application/json\r\n"
    static let length = "Content-Length: \(listBody.utf8.count)\r\n"

    /// A padded body of exactly `size` bytes running the list query.
    static func paddedBody(_ size: Int) -> String {
        let open = #"{"query":"{ listObjects { nextToken } }""#
        return open + String(repeating: " ", count: size - open.utf8.count - 1) + "}"
    }

    static var shapes: [Shape] {
        let body = listBody
        let n = body.utf8.count
        let chunked = String(n, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
        return [
            Shape("plain", b(head + json + length + "\r\n" + body)),
            Shape("length with leading zeros", b(head + json + "Content-Length: 00\(n)\r\n\r\n" + body)),
            Shape("length of seven digits", b(head + json + "Content-Length: 00000\(n)\r\n\r\n" + body)),
            Shape("length of eight digits", b(head + json + "Content-Length: 000000\(n)\r\n\r\n" + body)),
            Shape("length without a space", b(head + json + "Content-Length:\(n)\r\n\r\n" + body)),
            Shape("length after a tab", b(head + json + "Content-Length:\t\(n)\r\n\r\n" + body)),
            Shape("length before a tab", b(head + json + "Content-Length: \(n)\t\r\n\r\n" + body)),
            Shape("length before a space", b(head + json + "Content-Length: \(n) \r\n\r\n" + body)),
            Shape(
                "content type after a tab", b(head + "Content-Type:\tapplication/json\t\r\n" + length + "\r\n" + body)),
            Shape("length 0", b(head + json + "Content-Length: 0\r\n\r\n")),
            Shape("length and chunked", b(head + json + length + "Transfer-Encoding: chunked\r\n\r\n" + chunked)),
            Shape("chunked and length", b(head + json + "Transfer-Encoding: chunked\r\n" + length + "\r\n" + chunked)),
            Shape("chunked only", b(head + json + "Transfer-Encoding: chunked\r\n\r\n" + chunked)),
            Shape("transfer-encoding identity", b(head + json + length + "Transfer-Encoding: identity\r\n\r\n" + body)),
            Shape(
                "transfer-encoding with a space before the colon",
                b(head + json + length + "Transfer-Encoding : chunked\r\n\r\n" + body)),
            Shape("length list", b(head + json + "Content-Length: \(n), \(n)\r\n\r\n" + body)),
            Shape("length twice, equal", b(head + json + length + length + "\r\n" + body)),
            Shape("length twice, different", b(head + json + length + "Content-Length: 5\r\n\r\n" + body)),
            Shape("length with a space before the colon", b(head + json + "Content-Length : \(n)\r\n\r\n" + body)),
            Shape(
                "folded content type",
                b(head + "Content-Type: application/json\r\n ; charset=utf-8\r\n" + length + "\r\n" + body)),
            Shape("folded other header", b(head + json + "X-Pad: a\r\n\tb\r\n" + length + "\r\n" + body)),
            Shape("folded first header", b("POST /graphql HTTP/1.1\r\n Host: x\r\n" + json + length + "\r\n" + body)),
            Shape(
                "bare LF lines",
                b(
                    "POST /graphql HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\n"
                        + "Content-Length: \(n)\n\n" + body)),
            Shape("bare LF ending the block", b(head + json + length + "\n" + body)),
            Shape("bare CR in a value", b(head + json + "X-Note: a\rb\r\n" + length + "\r\n" + body)),
            Shape("NUL in a value", b(head + json + "X-Note: a"), [0], b("b\r\n" + length + "\r\n" + body)),
            Shape("NUL in a name", b(head + json + "X-No"), [0], b("te: a\r\n" + length + "\r\n" + body)),
            Shape("byte 0x80 in a value", b(head + json + "X-Note: a"), [0x80], b("b\r\n" + length + "\r\n" + body)),
            Shape("byte 0xFF in a name", b(head + json + "X-No"), [0xFF], b("te: a\r\n" + length + "\r\n" + body)),
            Shape("DEL in a value", b(head + json + "X-Note: a"), [0x7F], b("b\r\n" + length + "\r\n" + body)),
            Shape("parenthesis in a name", b(head + json + "X(Note): a\r\n" + length + "\r\n" + body)),
            Shape("CRLF before the request line", b("\r\n" + head + json + length + "\r\n" + body)),
            Shape(
                "header line of 9000 bytes",
                b(head + json + "X-Pad: " + String(repeating: "p", count: 9000) + "\r\n" + length + "\r\n" + body)),
            Shape(
                "header block of 100 KB",
                b(
                    head + json
                        + String(repeating: "X-Pad: " + String(repeating: "p", count: 1000) + "\r\n", count: 100)
                        + length + "\r\n" + body)),
            Shape("text/plain", b(head + "Content-Type: text/plain\r\n" + length + "\r\n" + body)),
            Shape(
                "TEXT/PLAIN with parameters",
                b(head + "Content-Type:  TEXT/Plain ; charset=utf-8\r\n" + length + "\r\n" + body)),
            Shape(
                "text/plain with a preflight header",
                b(head + "Content-Type: text/plain\r\nApollo-Require-Preflight: 1\r\n" + length + "\r\n" + body)),
            Shape(
                "form content type",
                b(head + "Content-Type: application/x-www-form-urlencoded\r\n" + length + "\r\n" + body)),
            Shape("no content type", b(head + length + "\r\n" + body)),
            Shape("empty content type", b(head + "Content-Type:\r\n" + length + "\r\n" + body)),
            Shape("content type twice", b(head + json + json + length + "\r\n" + body)),
            Shape("XML content type", b(head + "Content-Type: application/xml\r\n" + length + "\r\n" + body)),
            Shape("Origin", b(head + json + "Origin: http://evil.example\r\n" + length + "\r\n" + body)),
            Shape("Origin null", b(head + json + "Origin: null\r\n" + length + "\r\n" + body)),
            Shape("Expect 100-continue", b(head + json + length + "Expect: 100-continue\r\n\r\n" + body)),
            Shape("Connection close", b(head + json + length + "Connection: close\r\n\r\n" + body)),
            Shape("Connection keep-alive", b(head + json + length + "Connection: keep-alive\r\n\r\n" + body)),
            Shape(
                "Upgrade h2c",
                b(
                    head + json + length
                        + "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n"
                        + body)),
            // HTTP/1.0 without keep-alive ends the connection: no request may follow it.
            Shape(
                "HTTP/1.0", probe: false,
                b("POST /graphql HTTP/1.0\r\nHost: 127.0.0.1\r\n" + json + length + "\r\n" + body)),
            Shape("absolute form", b("POST http://127.0.0.1/graphql HTTP/1.1\r\n" + json + length + "\r\n" + body)),
            Shape("trailing slash", b("POST /graphql/ HTTP/1.1\r\n" + json + length + "\r\n" + body)),
            Shape("query string", b("POST /graphql?x=1 HTTP/1.1\r\n" + json + length + "\r\n" + body)),
            Shape("space after the version", b("POST /graphql HTTP/1.1 \r\n" + json + length + "\r\n" + body)),
            Shape("no Host", b("POST /graphql HTTP/1.1\r\n" + json + length + "\r\n" + body)),
            Shape("body of 64 KiB", b(post(paddedBody(64 * 1024)))),
            Shape("body of 64 KiB + 1", b(post(paddedBody(64 * 1024 + 1)))),
            Shape("length longer than the body", b(head + json + "Content-Length: \(n + 10)\r\n\r\n" + body)),
            Shape("length shorter than the body", b(head + json + "Content-Length: \(n - 3)\r\n\r\n" + body)),
            Shape("batch", b(post("[\(body),\(body)]"))),
            Shape("invalid JSON", b(post("{\"query\":"))),
            Shape("syntax error", b(post(#"{"query":"{ listObjects { "}"#))),
            Shape("unknown field", b(post(#"{"query":"{ nope }"}"#))),
            Shape(
                "too deep",
                b(
                    post(
                        #"{"query":""# + String(repeating: "{ a ", count: 60) + String(repeating: "}", count: 60)
                            + #""}"#))),
            Shape(
                "mutation",
                b(post(#"{"query":"mutation { createObjects(input: {objectId: \"m\", text: \"t\"}) { text } }"}"#))),
            Shape("subscription", b(post(#"{"query":"subscription { onCreateObjects { objectId } }"}"#))),
            Shape(
                "operation name not in the document",
                b(post(#"{"query":"{ listObjects { nextToken } }","operationName":"X"}"#))),
            Shape("variables not an object", b(post(#"{"query":"{ listObjects { nextToken } }","variables":[1]}"#))),
            Shape("any api key, none configured", b(head + json + "x-api-key: \r\n" + length + "\r\n" + body)),
        ]
    }

    @Test("each hostile request, followed by a plain one, is answered as the router answers it")
    func hostileShapesMatchTheRouter() async throws {
        try await Self.withServers { direct, reference in
            let probe = Self.b(try Self.query("{ probe: listObjects { nextToken } }"))
            for shape in Self.shapes {
                let bytes = shape.bytes + (shape.probe ? probe : [])
                let viaDirect = try await Self.exchange(direct, bytes)
                let viaRouter = try await Self.exchange(reference, bytes)
                #expect(viaDirect.0 == viaRouter.0, "\(shape): direct \(viaDirect.0) router \(viaRouter.0)")
                #expect(viaDirect.closed && viaRouter.closed, "\(shape): not closed")
            }
        }
    }

    @Test("credentials: a missing, wrong or odd x-api-key gets the answer the router gives")
    func credentialsMatchTheRouter() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-secret"
        let body = Self.listBody
        let length = Self.length
        /// The list query with `headers` (and the JSON content type unless `json` is false).
        func plain(_ headers: String, json: Bool = true) -> [UInt8] {
            Self.b(Self.head + (json ? Self.json : "") + headers + length + "\r\n" + body)
        }
        let cases: [Shape] = [
            Shape("no key", plain("")),
            Shape("wrong key", plain("x-api-key: wrong\r\n")),
            Shape("right key", plain("x-api-key: da2-secret\r\n")),
            Shape("key, name upper case", plain("X-API-KEY: da2-secret\r\n")),
            Shape("key with spaces around", plain("x-api-key: \t da2-secret \t\r\n")),
            Shape("key of another case", plain("x-api-key: DA2-SECRET\r\n")),
            Shape("empty key", plain("x-api-key:\r\n")),
            Shape("key twice, right first", plain("x-api-key: da2-secret\r\nx-api-key: wrong\r\n")),
            Shape("key twice, wrong first", plain("x-api-key: wrong\r\nx-api-key: da2-secret\r\n")),
            Shape("key as a list", plain("x-api-key: da2-secret, wrong\r\n")),
            Shape("underscore name", plain("x_api_key: da2-secret\r\n")),
            Shape("key and a bad bearer", plain("x-api-key: da2-secret\r\nAuthorization: Bearer x.y.z\r\n")),
            Shape("only a bad bearer", plain("Authorization: Bearer x.y.z\r\n")),
            Shape("admin secret", plain("x-hasura-admin-secret: da2-secret\r\n")),
            Shape(
                "key in a byte 0x80 value", Self.b(Self.head + Self.json + "x-api-key: da2-secret"), [0x80],
                Self.b("\r\n" + length + "\r\n" + body)),
            Shape(
                "text/plain with the key", plain("Content-Type: text/plain\r\nx-api-key: da2-secret\r\n", json: false)),
            Shape(
                "text/plain with a wrong key", plain("Content-Type: text/plain\r\nx-api-key: wrong\r\n", json: false)),
            Shape(
                "mutation with a wrong key",
                Self.b(
                    Self.post(
                        #"{"query":"mutation { createObjects(input: {objectId: \"k\", text: \"t\"}) { text } }"}"#,
                        headers: Self.json + "x-api-key: wrong\r\n"))),
        ]
        try await Self.withServers(configuration) { direct, reference in
            for shape in cases {
                let viaDirect = try await Self.exchange(direct, shape.bytes)
                let viaRouter = try await Self.exchange(reference, shape.bytes)
                #expect(viaDirect.0 == viaRouter.0, "\(shape): direct \(viaDirect.0) router \(viaRouter.0)")
                #expect(viaDirect.0.count == 1, "\(shape): \(viaDirect.0)")
            }
        }
    }

    // MARK: Framing

    @Test("two pipelined requests split at every byte boundary are answered once each, in order")
    func splitAtEveryByte() async throws {
        try await withDevServer { _, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            let pair = Array(
                (try Self.query("{ a: listObjects { nextToken } }") + Self.query("{ b: listObjects { nextToken } }"))
                    .utf8)
            for split in 1..<pair.count {
                await wire.send(Array(pair[..<split]))
                try await Task.sleep(for: .milliseconds(2))
                await wire.send(Array(pair[split...]))
                let answers = await wire.receive(responses: 2, timeout: 5).responses
                #expect(
                    answers.map(\.body) == [
                        #"{"data":{"a":{"nextToken":null}}}"#, #"{"data":{"b":{"nextToken":null}}}"#,
                    ],
                    "split at \(split)")
                if answers.count != 2 { break }
            }
        }
    }

    @Test("a request sent one byte per read is answered once")
    func oneBytePerRead() async throws {
        try await withDevServer { _, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            let bytes = Array(try Self.query("{ listObjects { nextToken } }").utf8)
            for byte in bytes {
                await wire.send([byte])
                try await Task.sleep(for: .milliseconds(1))
            }
            #expect(await wire.receive(responses: 1, timeout: 5).responses.map(\.body) == [Self.listAnswer])
        }
    }

    // MARK: Floods

    @Test("5000 pipelined requests in one write are answered in order, across a hand-over in the middle")
    func pipelineFlood() async throws {
        try await withDevServer { _, endpoints in
            for handOver in [false, true] {
                let wire = try AttackWire(port: try Self.port(endpoints))
                var text = ""
                for index in 0..<5000 {
                    if handOver, index == 2500 { text += DirectHTTPTests.get }
                    text += try Self.query("{ r\(index): listObjects { nextToken } }")
                }
                await wire.send(text)
                let expected = 5000 + (handOver ? 1 : 0)
                let answers = await wire.receive(responses: expected, timeout: 10).responses
                #expect(answers.count == expected)
                let bodies = answers.map(\.body).filter { !$0.contains("__typename") }
                #expect(
                    bodies == (0..<5000).map { #"{"data":{"r\#($0)":{"nextToken":null}}}"# }, "hand-over: \(handOver)")
            }
        }
    }

    @Test("2000 requests pipelined behind a queued mutation wait for it, then are answered in order")
    func floodBehindQueuedMutation() async throws {
        try await withDevServer { server, endpoints in
            let database = try #require(server.devEngine?.database)
            let wire = try AttackWire(port: try Self.port(endpoints))
            let held = Gate()
            Thread { try? database.write { _ in held.enter() } }.start()
            await held.waitUntilEntered()
            var text = try Self.query(#"mutation { createObjects(input: {objectId: "f", text: "flood"}) { text } }"#)
            for index in 0..<2000 {
                if index == 1000 { text += DirectHTTPTests.get }  // the hand-over comes after the mutation's answer
                text += try Self.query("{ r\(index): getObjects(objectId: \"f\") { text } }")
            }
            await wire.send(text)
            let early = await wire.receive(timeout: 1)
            #expect(early.bytes.isEmpty, "answered while the writer was held")
            held.release()
            let answers = await wire.receive(responses: 2002, timeout: 10).responses
            #expect(answers.count == 2002)
            #expect(answers.first?.body == #"{"data":{"createObjects":{"text":"flood"}}}"#)
            let bodies = answers.dropFirst().map(\.body).filter { !$0.contains("__typename") }
            #expect(bodies == (0..<2000).map { #"{"data":{"r\#($0)":{"text":"flood"}}}"# })
        }
    }

    // MARK: Half-close

    @Test("a half-close after an answered request and any prefix of the next loses no answer and closes")
    func halfCloseInEveryState() async throws {
        try await withDevServer { _, endpoints in
            let first = try Self.query("{ listObjects { nextToken } }")
            let second = Array(try Self.query("{ b: listObjects { nextToken } }").utf8)
            for cut in stride(from: 0, through: second.count, by: 3) {
                let wire = try AttackWire(port: try Self.port(endpoints))
                await wire.send(Array(first.utf8) + second[..<cut])
                wire.shutdownWrite()
                let received = await wire.receive(timeout: 5)
                let expected = cut == second.count ? 2 : 1
                #expect(received.closed, "cut at \(cut): not closed")
                #expect(received.responses.count == expected, "cut at \(cut): \(received.text)")
                #expect(received.responses.first?.body == Self.listAnswer)
            }
        }
    }

    // MARK: Timeouts

    @Test("a first request trickled a byte at a time is refused with 408 at the header timeout")
    func slowlorisFirstRequest() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.headerTimeout = .seconds(1)
        try await withDevServer(configuration) { _, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            // A header block that never ends, a byte every 200 ms until the server closes: only the header timeout
            // (1 s) can end it, and a timeout that each byte pushed back would never fire. The outcome decides (a 408
            // and the close, with the client still sending), not the clock: the 20 s without an answer that
            // `receive` allows only ends a failing run.
            let trickle = Task { await Self.trickle(Array(Self.head.utf8), padding: wire) }
            let received = await wire.receive(timeout: 20)
            trickle.cancel()
            #expect(received.responses.map(\.status) == [408])
            #expect(received.closed)
        }
    }

    /// Sends `start`, then one padding header's bytes one at a time every 200 ms, without end, until cancelled.
    static func trickle(_ start: [UInt8], padding wire: AttackWire) async {
        let pad = Array("X-Pad: ".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: 1 << 16)
        for byte in start + pad {
            if Task.isCancelled { return }
            await wire.send([byte])
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    @Test("an incomplete body that never completes is closed by the idle timeout")
    func incompleteBody() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.idleTimeout = .seconds(1)
        configuration.limits.headerTimeout = .seconds(120)
        try await withDevServer(configuration) { _, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            await wire.send(Self.head + Self.json + "Content-Length: 100\r\n\r\n{\"query\":")
            // The idle timer is the subject: the close at all is the outcome. `receive` waits up to 20 s (20 times
            // the timeout, generous for a loaded machine), and the header timeout is set far beyond that, so the
            // close can only be the idle timeout's.
            let received = await wire.receive(timeout: 20)
            #expect(received.closed && received.bytes.isEmpty)
        }
    }

    // MARK: Shutdown

    /// Header and idle timeouts far longer than any test waits (120 s), so that a close within a test's `receive`
    /// can only be the one under test (a shutdown's, a half-close's), not a timer's.
    static var noTimers: GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.headerTimeout = .seconds(120)
        configuration.limits.idleTimeout = .seconds(120)
        return configuration
    }

    @Test("a graceful shutdown while a mutation is queued answers it, then closes")
    func shutdownWhileMutationQueued() async throws {
        try await withDevServer { server, endpoints in
            let engine = try #require(server.devEngine)
            let wire = try AttackWire(port: try Self.port(endpoints))
            let held = Gate()
            Thread { try? engine.database.write { _ in held.enter() } }.start()
            await held.waitUntilEntered()
            await wire.send(
                try Self.query(#"mutation { createObjects(input: {objectId: "s", text: "stop"}) { text } }"#))
            #expect(await waitUntil(timeout: .seconds(10)) { !engine.writes.isQuiet }, "the mutation was not queued")
            let stopping = Task { await server.shutdown() }
            try await Task.sleep(for: .milliseconds(300))
            held.release()
            let received = await wire.receive(timeout: 5)
            await stopping.value
            #expect(received.closed)
            #expect(received.responses.map(\.body) == [#"{"data":{"createObjects":{"text":"stop"}}}"#])
            #expect(received.responses.first?.header("Connection") == "close")
        }
    }

    @Test(
        "a half-close or a shutdown behind a queued mutation and a request for the router: both answered, in order, then closed",
        arguments: [false, true])
    func handOverAfterQueuedMutationWithCloseOrShutdown(shutdown: Bool) async throws {
        try await withDevServer(Self.noTimers) { server, endpoints in
            let engine = try #require(server.devEngine)
            let wire = try AttackWire(port: try Self.port(endpoints))
            let held = Gate()
            Thread { try? engine.database.write { _ in held.enter() } }.start()
            await held.waitUntilEntered()
            await wire.send(
                try Self.query(#"mutation { createObjects(input: {objectId: "g", text: "get"}) { text } }"#)
                    + DirectHTTPTests.get)
            #expect(await waitUntil(timeout: .seconds(10)) { !engine.writes.isQuiet }, "the mutation was not queued")
            let stopping = shutdown ? Task { await server.shutdown() } : nil
            if !shutdown { wire.shutdownWrite() }
            try await Task.sleep(for: .milliseconds(300))
            held.release()
            // With no timer that could close it within the 20 s `receive` allows (Self.noTimers), the close is the
            // half-close's or the shutdown's: the outcome decides, not the clock.
            let received = await wire.receive(timeout: 20)
            await stopping?.value
            #expect(received.closed)
            #expect(
                received.responses.map(\.body) == [
                    #"{"data":{"createObjects":{"text":"get"}}}"#, #"{"data":{"__typename":"Query"}}"#,
                ])
        }
    }

    @Test("a graceful shutdown while a body is incomplete answers the request once it completes")
    func shutdownWhileBodyIncomplete() async throws {
        try await withDevServer { server, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            let request = Array(try Self.query("{ b: listObjects { nextToken } }").utf8)
            // The first answer shows the server has read the bytes sent with it.
            await wire.send(Array(try Self.query("{ listObjects { nextToken } }").utf8) + request.dropLast(5))
            #expect(await wire.receive(responses: 1, timeout: 5).responses.map(\.body) == [Self.listAnswer])
            let stopping = Task { await server.shutdown() }
            try await Task.sleep(for: .milliseconds(300))
            await wire.send(Array(request.suffix(5)))
            let received = await wire.receive(timeout: 5)
            await stopping.value
            #expect(received.closed)
            #expect(received.responses.map(\.body) == [#"{"data":{"b":{"nextToken":null}}}"#])
            #expect(received.responses.first?.header("Connection") == "close")
        }
    }

    @Test(
        "a request whose body completes during a graceful shutdown and turns out to be for the router: answered, then closed",
        arguments: ["batch", "text/plain"])
    func shutdownThenHandOverAfterBody(kind: String) async throws {
        try await withDevServer(Self.noTimers) { server, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            let batch = "[\(Self.listBody),\(Self.listBody)]"
            let request = Array(
                (kind == "batch"
                    ? Self.post(batch) : Self.post(Self.listBody, headers: "Content-Type: text/plain\r\n")).utf8)
            // The first answer shows the server has read the bytes sent with it: a whole header block.
            await wire.send(Array(try Self.query("{ listObjects { nextToken } }").utf8) + request.dropLast(5))
            #expect(await wire.receive(responses: 1, timeout: 5).responses.map(\.body) == [Self.listAnswer])
            let stopping = Task { await server.shutdown() }
            try await Task.sleep(for: .milliseconds(300))
            await wire.send(Array(request.suffix(5)))
            // No timer can close it within the 20 s `receive` allows (Self.noTimers): the close is the shutdown's.
            let received = await wire.receive(timeout: 20)
            await stopping.value
            #expect(received.closed)
            #expect(received.responses.map(\.status) == [kind == "batch" ? 200 : 400], "\(received.responses)")
        }
    }

    @Test(
        "after an answer, a header block trickled a byte at a time does not keep the connection from its idle timeout")
    func slowlorisAfterAnswer() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.idleTimeout = .seconds(1)
        // The header timeout far beyond the test's wait: a close within it can only be the idle timeout's.
        configuration.limits.headerTimeout = .seconds(120)
        try await withDevServer(configuration) { _, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            await wire.send(try Self.query("{ listObjects { nextToken } }"))
            #expect(await wire.receive(responses: 1, timeout: 5).responses.map(\.body) == [Self.listAnswer])
            // A header block that never ends: only a timeout that the bytes do not push back can close it, and
            // the close while the client is still sending is the outcome (`receive` allows 20 s, for a loaded
            // machine).
            let trickle = Task { await Self.trickle(Array(Self.head.utf8), padding: wire) }
            let received = await wire.receive(timeout: 20)
            trickle.cancel()
            #expect(received.closed && received.bytes.isEmpty)
        }
    }

    @Test("a graceful shutdown does not wait for an incomplete header block after an answer")
    func shutdownDropsIncompleteHeaderBlock() async throws {
        try await withDevServer(Self.noTimers) { server, endpoints in
            let wire = try AttackWire(port: try Self.port(endpoints))
            await wire.send(try Self.query("{ listObjects { nextToken } }") + Self.head)
            #expect(await wire.receive(responses: 1, timeout: 5).responses.map(\.body) == [Self.listAnswer])
            let stopping = Task { await server.shutdown() }
            // No timer can close it within the 20 s `receive` allows (Self.noTimers): the close is the shutdown's.
            let received = await wire.receive(timeout: 20)
            #expect(received.closed && received.bytes.isEmpty)
            await stopping.value
        }
    }
}
