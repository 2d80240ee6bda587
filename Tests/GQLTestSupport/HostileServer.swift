import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP server on 127.0.0.1 that answers each request with whatever its script says: bodies that are not
/// GraphQL, statuses and headers no real server would send, redirects, bodies that stall, trickle or never end, or
/// no answer at all. One connection per request (every answer closes it); blocking socket calls run on threads of
/// their own, each wait bounded, so nothing blocks the concurrency pool the client under test runs on. It records
/// every request (head and body) and how many body bytes it sent, for tests that check what reached it.
///
/// ```swift
/// let server = try HostileServer { _, _ in .http(200, #"{"data":{"ok":true}}"#) }
/// defer { server.stop() }
/// ```
public final class HostileServer: Sendable {
    /// One answer.
    public enum Reply: Sendable {
        /// These bytes, then the connection is closed.
        case raw([UInt8])
        /// The request is read and never answered; the connection stays open until the client or ``stop()``
        /// closes it.
        case hang
        /// `head` (a whole response head, blank line included), then `chunk` again and again, every `interval`
        /// (`nil`: as fast as the client takes them), `count` times (`nil`: until the client closes the connection
        /// or ``stop()``), then the connection stays open until one of them closes it. An empty `chunk` is a body
        /// that stalls after the head.
        case stream(head: String, chunk: [UInt8], interval: Duration?, count: Int?)

        /// A whole HTTP/1.1 response with `body`, `Content-Length` set.
        public static func http(
            _ status: Int, _ body: String, headers: [String] = [], contentType: String = "application/json"
        ) -> Reply {
            let head = head(status, headers: headers + ["Content-Length: \(body.utf8.count)"], contentType: contentType)
            return .raw(Array((head + body).utf8))
        }

        /// A 200 with `body`.
        public static func json(_ body: String) -> Reply { .http(200, body) }

        /// A redirect with `status` to `location`, with an empty body.
        public static func redirect(_ status: Int, to location: String) -> Reply {
            .http(status, "", headers: ["Location: \(location)"])
        }

        /// A head with `status` and no length, then `chunk` for ever: a body that ends only when the client
        /// closes the connection.
        public static func endless(_ status: Int, chunk: [UInt8] = Array(repeating: 0x78, count: 65536)) -> Reply {
            .stream(head: head(status), chunk: chunk, interval: nil, count: nil)
        }

        /// A response head: the status line, the content type, `Connection: close`, `headers`, the blank line.
        public static func head(
            _ status: Int, headers: [String] = [], contentType: String = "application/json"
        ) -> String {
            (["HTTP/1.1 \(status) Status", "Content-Type: \(contentType)", "Connection: close"] + headers)
                .joined(separator: "\r\n") + "\r\n\r\n"
        }
    }

    /// One request as received.
    public struct Request: Sendable {
        /// The request line and headers, as sent (CR LF separated).
        public var head: String
        public var body: String
    }

    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)/graphql" }
    /// The requests received, in order.
    public var requests: [Request] { state.withLock { $0.requests } }
    /// The request bodies received, in order.
    public var bodies: [String] { requests.map(\.body) }
    public var requestCount: Int { state.withLock { $0.requests.count } }
    /// How many ``Reply/hang`` connections the client closed (a request it gave up, as a cancelled task does).
    public var closedByClient: Int { state.withLock { $0.closedByClient } }
    /// The bytes sent after response heads, over every connection.
    public var bodyBytesSent: Int { state.withLock { $0.bodyBytesSent } }
    /// The longest time between two sends of a ``Reply/stream(head:chunk:interval:count:)`` answer (its head
    /// included), over every connection: how late a loaded machine let this server be.
    public var longestSendGap: Duration { state.withLock { $0.longestSendGap } }

    private struct State {
        var requests: [Request] = []
        var bodyBytesSent = 0
        var longestSendGap = Duration.zero
        var stopped = false
        var closedByClient = 0
    }

    private let state = GQLLocked(State())

    /// Listens on a free port; `script` gets each request's number (from 0) and body.
    public init(_ script: @escaping @Sendable (_ index: Int, _ body: String) -> Reply) throws {
        let (listener, port) = try LoopbackListener.open(backlog: 64)
        self.port = port
        let state = state
        LoopbackListener.serve(listener, until: { state.withLock { $0.stopped } }) { connection in
            Self.serve(connection, state: state, script: script)
        }
    }

    deinit { stop() }

    /// Stops accepting (the listener closes within 50 ms); open connections close within 100 ms too.
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    private static func serve(
        _ connection: Int32, state: GQLLocked<State>, script: @Sendable (Int, String) -> Reply
    ) {
        defer { close(connection) }
        // A send to a client that stopped reading returns within 100 ms, so a stop is seen.
        var limit = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard let request = readRequest(connection, state: state) else { return }
        let index = state.withLock { state -> Int in
            state.requests.append(request)
            return state.requests.count - 1
        }
        let stopped = { state.withLock { $0.stopped } }
        switch script(index, request.body) {
        case .raw(let bytes):
            _ = sendAll(connection, bytes[...], stopped: stopped)
        case .hang:
            if waitForClose(connection, stopped: stopped) { state.withLock { $0.closedByClient += 1 } }
        case .stream(let head, let chunk, let interval, let count):
            guard sendAll(connection, Array(head.utf8)[...], stopped: stopped) else { return }
            var last = ContinuousClock.now
            var sent = 0
            while !stopped(), count.map({ sent < $0 }) ?? true, !chunk.isEmpty {
                if let interval {
                    // Waits out the interval, ending early when the client closes.
                    let milliseconds = Int32(clamping: interval.nanoseconds / 1_000_000)
                    if readable(connection, milliseconds: milliseconds), clientClosed(connection) { return }
                }
                guard sendAll(connection, chunk[...], stopped: stopped) else { return }
                let now = ContinuousClock.now
                state.withLock {
                    $0.bodyBytesSent += chunk.count
                    $0.longestSendGap = max($0.longestSendGap, now - last)
                }
                last = now
                sent += 1
            }
            _ = waitForClose(connection, stopped: stopped)
        }
    }

    /// Sends every byte, unless the client closes or the server stops first; whether all went.
    private static func sendAll(_ connection: Int32, _ bytes: ArraySlice<UInt8>, stopped: () -> Bool) -> Bool {
        var rest = bytes
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                rest = rest.dropFirst(count)
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                if stopped() { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Until the client closes (end of stream) or the server stops; whether the client closed.
    private static func waitForClose(_ connection: Int32, stopped: () -> Bool) -> Bool {
        while !stopped() {
            if readable(connection, milliseconds: 50), clientClosed(connection) { return true }
        }
        return false
    }

    /// Whether a readable connection was closed by the client (what it still sends is read and dropped).
    private static func clientClosed(_ connection: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        return bytes.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) } <= 0
    }

    /// One request (its head read up to the blank line, the body by `Content-Length`); nil when the client closes
    /// first or the server stops.
    private static func readRequest(_ connection: Int32, state: GQLLocked<State>) -> Request? {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var bodyStart: Int?
        var length = 0
        while !state.withLock({ $0.stopped }) {
            if let start = bodyStart, received.count - start >= length {
                return Request(
                    head: String(decoding: received[..<start], as: UTF8.self),
                    body: String(decoding: received[start..<(start + length)], as: UTF8.self))
            }
            guard readable(connection, milliseconds: 50) else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            received += chunk[..<count]
            if bodyStart == nil, let end = headEnd(received) {
                bodyStart = end
                let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
        return nil
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count
        where bytes[i - 3] == 13 && bytes[i - 2] == 10 && bytes[i - 1] == 13 && bytes[i] == 10 {
            return i + 1
        }
        return nil
    }

    private static func readable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }
}
