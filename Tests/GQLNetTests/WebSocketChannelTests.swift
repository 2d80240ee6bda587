import Foundation
import GQLCore
import Testing

@testable import GQLNet

/// GQLNet's WebSocket client below GraphQL, against an independent RFC 6455 server (the Python `websockets`
/// library at its defaults, Tests/Interop/websocket_peer.py): the handshake's headers, fragments, ping/pong, the
/// close handshake, the size limit, subprotocol negotiation and refused upgrades.
@Suite("WebSocket client against the websockets library", .timeLimit(.minutes(2)))
struct WebSocketChannelTests {
    /// What a socket reported, in order.
    final class Events: Sendable {
        private let list = GQLLocked<[WebSocketEvent]>([])
        var texts: [String] { list.withLock { $0.compactMap { if case .text(let text) = $0 { text } else { nil } } } }
        var sawTooLarge: Bool { list.withLock { $0.contains { if case .tooLarge = $0 { true } else { false } } } }
        func add(_ event: WebSocketEvent) { list.withLock { $0.append(event) } }

        /// Polls (at most 10 s) until `count` text messages arrived: a server drops what it has not sent yet when
        /// our close arrives.
        func waitForTexts(_ count: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while texts.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    static func open(
        _ peer: StrawberryPeer, _ path: String, headers: [String: String] = [:],
        subprotocol: String? = "graphql-transport-ws", maximumMessageSize: Int = 1 << 20
    ) async throws -> (WebSocketChannel, Events) {
        let events = Events()
        let handshake = try WebSocketHandshake(
            url: peer.webSocket + path.dropFirst(), subprotocol: subprotocol, headers: headers)
        let socket = try await WebSocketChannel.connect(
            handshake, settings: .init(maximumMessageSize: maximumMessageSize, connectTimeout: .seconds(10)),
            onEvent: events.add)
        return (socket, events)
    }

    static func withPeer(_ body: (StrawberryPeer) async throws -> Void) async throws {
        let peer = try await StrawberryPeer.start(script: "websocket_peer.py")
        do {
            try await body(peer)
            await peer.stop()
        } catch {
            await peer.stop()
            throw error
        }
    }

    @Test func theHandshakeCarriesTheCallersHeadersAndNoOrigin() async throws {
        try await Self.withPeer { peer in
            let (socket, events) = try await Self.open(peer, "/headers", headers: ["x-trace": "abc"])
            try await events.waitForTexts(1)
            socket.close(code: 1000, reason: "")
            _ = await socket.closure
            let headers = try #require(events.texts.first.flatMap { try? GQLValue(json: Data($0.utf8)) })
            let names = headers.arrayValue?.compactMap { $0[0]?.stringValue?.lowercased() } ?? []
            #expect(!names.contains("origin"), "\(names)")
            #expect(names.filter { $0 == "host" }.count == 1)
            #expect(headers.arrayValue?.contains(["x-trace", "abc"]) == true, "\(headers)")
            #expect(headers.arrayValue?.contains(["Sec-WebSocket-Protocol", "graphql-transport-ws"]) == true)
            let port = try #require(URLComponents(string: peer.http)?.port)
            #expect(headers.arrayValue?.contains(["Host", .string("127.0.0.1:\(port)")]) == true, "\(headers)")
        }
    }

    @Test func fragmentsAreJoinedPingsAnsweredAndTheServersCloseEchoed() async throws {
        try await Self.withPeer { peer in
            let (socket, events) = try await Self.open(peer, "/fragments")
            let closure = await socket.closure
            #expect(events.texts == ["héllo, wörld"])
            #expect(closure.code == 4321)
            #expect(closure.reason == "bye")
            #expect(closure.error == nil)
            // The peer got its pong (or it would not have sent the message) and our echo of its close; it logs
            // that once its close handshake ended (polled, at most 10 s).
            let deadline = ContinuousClock.now + .seconds(10)
            while !peer.stderr.contains("fragments: close answered"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(peer.stderr.contains("fragments: close answered with 4321"), "\(peer.stderr)")
        }
    }

    @Test func ourCloseIsAnsweredAndMessagesTravelBothWays() async throws {
        try await Self.withPeer { peer in
            let (socket, events) = try await Self.open(peer, "/echo")
            let long = String(repeating: "ä", count: 100_000)  // 200 kB: several TCP segments
            try await socket.send("one")
            try await socket.send(long)
            try await events.waitForTexts(2)
            socket.close(code: 4000, reason: "done")
            let closure = await socket.closure
            #expect(events.texts == ["one", long])
            #expect(closure.code == 4000, "the server echoes the code")
            #expect(closure.error == nil)
            await #expect(throws: GQLError.self) { try await socket.send("late") }
        }
    }

    @Test func aMessageOverTheLimitIsReportedAndDropped() async throws {
        try await Self.withPeer { peer in
            let (socket, events) = try await Self.open(peer, "/size/5000", maximumMessageSize: 4096)
            let closure = await socket.closure
            #expect(events.sawTooLarge)
            #expect(events.texts.isEmpty)
            #expect(closure.code == 1009 || closure.error?.code == .responseTooLarge, "\(closure)")
            let (exact, fits) = try await Self.open(peer, "/size/4096", maximumMessageSize: 4096)
            try await fits.waitForTexts(1)
            exact.close(code: 1000, reason: "")
            _ = await exact.closure
            #expect(fits.texts.first?.utf8.count == 4096)
            #expect(!fits.sawTooLarge)
        }
    }

    @Test func theSubprotocolMustBeTheOneOffered() async throws {
        try await Self.withPeer { peer in
            await #expect {
                _ = try await Self.open(peer, "/no-subprotocol")
            } throws: { error in
                (error as? GQLError)?.message.contains("did not accept the subprotocol graphql-transport-ws") == true
            }
        }
    }

    @Test func aRefusedUpgradeSaysItsStatus() async throws {
        try await Self.withPeer { peer in
            for status in [403, 404, 503] {
                await #expect {
                    _ = try await Self.open(peer, "/status/\(status)")
                } throws: { error in
                    guard let error = error as? GQLError else { return false }
                    return error.httpStatus == status
                        && error.message.hasPrefix("WebSocket upgrade refused: HTTP \(status)")
                        && error.code == (status == 403 ? .unauthorized : .http)
                }
            }
        }
    }

    /// With an hour's connect timeout, waiting for it would hit the suite's time limit.
    @Test func nothingListeningIsRefusedAtOnce() async throws {
        let handshake = try WebSocketHandshake(url: "ws://127.0.0.1:1/graphql", subprotocol: nil, headers: [:])
        await #expect {
            _ = try await WebSocketChannel.connect(
                handshake, settings: .init(maximumMessageSize: 1024, connectTimeout: .seconds(3600)),
                onEvent: { _ in })
        } throws: { error in
            (error as? GQLError)?.message == "cannot connect to ws://127.0.0.1:1/graphql: connection refused"
        }
    }

    @Test func badURLsAndReservedHeadersAreRefusedBeforeConnecting() {
        #expect(throws: GQLError.self) { try WebSocketHandshake(url: "ftp://x/", subprotocol: nil, headers: [:]) }
        #expect(throws: GQLError.self) { try WebSocketHandshake(url: "ws:///path", subprotocol: nil, headers: [:]) }
        #expect(throws: GQLError.self) {
            try WebSocketHandshake(url: "ws://x/", subprotocol: nil, headers: ["Sec-WebSocket-Key": "k"])
        }
        #expect(throws: GQLError.self) {
            try WebSocketHandshake(url: "ws://x/", subprotocol: nil, headers: ["x-a": "line\r\nbreak"])
        }
        let ipv6 = try? WebSocketHandshake(url: "wss://[::1]:8443/a?b=c", subprotocol: nil, headers: [:])
        #expect(ipv6?.host == "::1")
        #expect(ipv6?.hostHeader == "[::1]:8443")
        #expect(ipv6?.path == "/a?b=c")
        #expect(ipv6?.usesTLS == true)
    }
}
