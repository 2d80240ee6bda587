import Foundation
import GQLCore
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
            #expect(await awaitReleased(port: port), "direct \(direct): the connection was not closed")
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
            #expect(await awaitReleased(port: port), "\(kind): the server still holds the connection")
            withExtendedLifetime(wire) {}
        }
    }
}

/// Whether the server has released every connection on `port` (``serverHeldConnections(port:)``) within `seconds`:
/// polled, so a loaded machine's late timer only makes it wait longer.
func awaitReleased(port: Int, within seconds: Int = 15) async -> Bool {
    for _ in 0..<(seconds * 20) {
        if serverHeldConnections(port: port) == 0 { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return serverHeldConnections(port: port) == 0
}

/// The server side's connections on `port` whose descriptors this process still holds (from `/proc/net/tcp`
/// and `/proc/self/fd`): a connection the server closed has none, one it only shut for output still has one.
func serverHeldConnections(port: Int) -> Int {
    #if os(Linux)
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        let inodes = Set(
            links.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
                .filter { $0.hasPrefix("socket:[") }.map { String($0.dropFirst(8).dropLast()) })
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let hexPort = String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9 else { return false }
            return columns[1].hasSuffix(":" + hexPort) && columns[3] != "0A" && inodes.contains(String(columns[9]))
        }.count
    #else
        return 0
    #endif
}
