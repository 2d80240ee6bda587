import Foundation
import GQLCore
import GQLTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An HTTP server on 127.0.0.1 that answers each request with whatever its script says: bodies that are not
/// GraphQL, statuses and headers no real server would send, or no answer at all. One connection per request
/// (every answer closes it); blocking socket calls run on threads of their own, each wait bounded, so nothing
/// blocks the concurrency pool the engine under test runs on.
final class HostileServer: Sendable {
    /// One answer.
    enum Reply: Sendable {
        /// These bytes, then the connection is closed.
        case raw([UInt8])
        /// The request is read and never answered; the connection stays open until the client or ``stop()``
        /// closes it.
        case hang

        /// A whole HTTP/1.1 response with `body`, `Content-Length` set.
        static func http(_ status: Int, _ body: String, headers: [String] = []) -> Reply {
            let head =
                ["HTTP/1.1 \(status) Status", "Content-Type: application/json", "Connection: close"]
                + headers + ["Content-Length: \(body.utf8.count)"]
            return .raw(Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8))
        }

        /// A 200 with `body`.
        static func json(_ body: String) -> Reply { .http(200, body) }
    }

    let port: Int
    var url: String { "http://127.0.0.1:\(port)/graphql" }
    /// The request bodies received, in order.
    var bodies: [String] { state.withLock { $0.bodies } }
    var requestCount: Int { state.withLock { $0.bodies.count } }

    private struct State {
        var bodies: [String] = []
        var stopped = false
    }

    private let state = GQLLocked(State())

    /// Listens on a free port; `script` gets each request's number (from 0) and body.
    init(_ script: @escaping @Sendable (_ index: Int, _ body: String) -> Reply) throws {
        let (listener, port) = try LoopbackListener.open(backlog: 64)
        self.port = port
        let state = state
        LoopbackListener.serve(listener, until: { state.withLock { $0.stopped } }) { connection in
            Self.serve(connection, state: state, script: script)
        }
    }

    deinit { stop() }

    /// Stops accepting (the listener closes within 50 ms); hanging connections close within 50 ms too.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    private static func serve(
        _ connection: Int32, state: GQLLocked<State>, script: @Sendable (Int, String) -> Reply
    ) {
        defer { close(connection) }
        guard let body = readRequest(connection, state: state) else { return }
        let index = state.withLock { state -> Int in
            state.bodies.append(body)
            return state.bodies.count - 1
        }
        switch script(index, body) {
        case .raw(let bytes):
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes {
                    send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else { return }
                sent += count
            }
        case .hang:
            // Until the client gives up (end of stream) or the server stops.
            var byte: UInt8 = 0
            while !state.withLock({ $0.stopped }) {
                guard readable(connection, milliseconds: 50) else { continue }
                if recv(connection, &byte, 1, 0) <= 0 { return }
            }
        }
    }

    /// The body of one request (its head read up to the blank line, the body by `Content-Length`); nil when the
    /// client closes first or the server stops.
    private static func readRequest(_ connection: Int32, state: GQLLocked<State>) -> String? {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var bodyStart: Int?
        var length = 0
        while !state.withLock({ $0.stopped }) {
            if let start = bodyStart, received.count - start >= length {
                return String(decoding: received[start..<(start + length)], as: UTF8.self)
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
