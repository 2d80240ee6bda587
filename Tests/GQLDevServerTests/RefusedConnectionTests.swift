import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLDevServer

/// A connection that ``ConnectionGuard`` refused (408 at the header timeout, 400 for what the HTTP parser
/// rejects) is closed lingering: its descriptor is released while the client keeps its side open, and nothing it
/// sends after the refusal runs; a refusal of the HTTP parser's comes after the answers of the requests before it.
@Suite("GQLDevServer closes refused connections", .serialized, .timeLimit(.minutes(3)))
struct RefusedConnectionTests {
    typealias T = DirectHTTPAttackTests

    @Test("a request completed after its 408 is not run", arguments: [true, false])
    func requestAfter408(direct: Bool) async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.headerTimeout = .seconds(1)
        if !direct { configuration.faults.latencyMilliseconds = 1 }
        let fixture = try EngineFixture()
        try await withDevServer(configuration, engine: fixture.engine) { _, endpoints in
            let port = try T.port(endpoints)
            let wire = try AttackWire(port: port)
            let body =
                #"{"query":"mutation { createObjects(input: {objectId: \"late\", text: \"after 408\"}) { text } }"}"#
            await wire.send(T.head + T.json)
            let refused = await wire.receive(timeout: 10)
            #expect(refused.responses.map(\.status) == [408])
            await wire.send("Content-Length: \(body.utf8.count)\r\n\r\n" + body)
            // The server has read the request to its end once it closes the socket on the client's half-close (it
            // reads in order); a mutation it ran from it would be queued by then, ahead of the probe below.
            wire.shutdownWrite()
            #expect(try await awaitReleased(port: port), "direct \(direct): the connection was not closed")
            let probe = #"mutation { createObjects(input: {objectId: "probe"}) { objectId } }"#
            #expect(await fixture.engine.execute(.init(query: probe)).value["errors"] == nil)
            let answer = await fixture.engine.execute(.init(query: #"{ getObjects(objectId: "late") { text } }"#))
            #expect(answer.value == ["data": ["getObjects": nil]], "direct \(direct): the refused mutation ran")
            withExtendedLifetime(wire) {}
        }
    }

    @Test(
        "a request the parser cannot read, behind requests it read, is refused after their answers",
        arguments: ["", "direct first"])
    func refusalAfterEarlierAnswers(prefix: String) async throws {
        let first = prefix.isEmpty ? "" : try T.query("{ listObjects { nextToken } }")
        try await T.withServers { direct, reference in
            for (name, port) in [("direct", direct), ("reference", reference)] {
                let bytes = Array((first + DirectHTTPTests.get + DirectHTTPTests.get + "GARBAGE\r\n\r\n").utf8)
                let (responses, closed) = try await T.exchange(port, bytes)
                #expect(
                    responses.map(\.status) == (prefix.isEmpty ? [200, 200, 400] : [200, 200, 200, 400]),
                    "\(name): \(responses)")
                #expect(responses.dropLast().allSatisfy { $0.body.hasPrefix(#"{"data":"#) }, "\(name): \(responses)")
                #expect(closed)
            }
        }
    }

    @Test(
        "a refused connection's descriptor is released while the client keeps its side open",
        arguments: ["silent", "408", "400", "400 after direct"])
    func refusedConnectionReleased(kind: String) async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.limits.headerTimeout = .seconds(1)
        try await withDevServer(configuration) { _, endpoints in
            let port = try T.port(endpoints)
            let wire = try AttackWire(port: port)
            switch kind {
            case "silent": break
            case "408": await wire.send("POST /graphql HTTP/1.1\r\n")
            case "400": await wire.send("GARBAGE\r\n\r\n")
            default: await wire.send(try T.query("{ listObjects { nextToken } }") + "GARBAGE\r\n\r\n")
            }
            let received = await wire.receive(timeout: 10)
            #expect(received.closed, "\(kind): \(received.text)")
            // Released after the 2 s lingering close (or never, if the server waited for the client).
            #expect(try await awaitReleased(port: port), "\(kind): the server still holds the connection")
            withExtendedLifetime(wire) {}
        }
    }

    /// The count the tests above rely on sees a connection this process holds, and no longer sees it once closed:
    /// without this, a count that could not see anything (another address family, another /proc layout) would
    /// pass every release check above.
    @Test func theHeldConnectionCountSeesAnAcceptedConnection() throws {
        let (listener, port) = try LoopbackListener.open(backlog: 1)
        defer { close(listener) }
        let client = try RawConnection.connect(port: port)
        defer { close(client) }
        let accepted = accept(listener, nil, nil)
        try #require(accepted >= 0, "accept failed: errno \(errno)")
        #expect(try serverHeldConnections(port: port) == 1)
        close(accepted)
        #expect(try serverHeldConnections(port: port) == 0)
    }
}

/// Whether the server has released every connection on `port` (``serverHeldConnections(port:)``) within `seconds`:
/// polled, so a loaded machine's late timer only makes it wait longer.
func awaitReleased(port: Int, within seconds: Int = 15) async throws -> Bool {
    for _ in 0..<(seconds * 20) {
        if try serverHeldConnections(port: port) == 0 { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try serverHeldConnections(port: port) == 0
}

/// The server side's connections on `port` whose descriptors this process still holds (from `/proc/net/tcp`,
/// `/proc/net/tcp6` and `/proc/self/fd`): a connection the server closed has none, one it only shut for output
/// still has one. Throws when the tables cannot be read, so that a check of "none held" cannot pass by counting
/// nothing.
func serverHeldConnections(port: Int) throws -> Int {
    #if os(Linux)
        let links = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        let inodes = Set(
            links.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
                .filter { $0.hasPrefix("socket:[") }.map { String($0.dropFirst(8).dropLast()) })
        // tcp6 is absent on a kernel without IPv6; tcp is always there.
        let table = try procFile("/proc/net/tcp") + ((try? procFile("/proc/net/tcp6")) ?? "")
        let hexPort = String(format: "%04X", port)
        return table.split(separator: "\n").filter { !$0.contains("local_address") }.filter { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9 else { return false }
            return columns[1].hasSuffix(":" + hexPort) && columns[3] != "0A" && inodes.contains(String(columns[9]))
        }.count
    #else
        throw GQLError(.io, "counting held connections needs Linux's /proc")
    #endif
}

/// The whole text of a /proc file, read until its end: the kernel makes such files a page at a time, and a read that
/// trusts the file's size (0) or one `read` call sees only the first page — here, the first 30 or so connections,
/// so a busy machine's table hid the connection a test looked for.
private func procFile(_ path: String) throws -> String {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw GQLError(.io, "cannot open \(path): errno \(errno)") }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw GQLError(.io, "cannot read \(path): errno \(errno)") }
        if count == 0 { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
