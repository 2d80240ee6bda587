import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain TCP connection to 127.0.0.1, for the requests no HTTP client would send: garbage request lines,
/// contradictory `Content-Length`s, headers that never end. Blocking socket calls run on a thread of their own,
/// never on the concurrency pool the server's handlers use.
public final class RawConnection: Sendable {
    private let descriptor: Int32

    /// What the server sent, and whether it closed the connection (end of stream or reset) before `timeout`.
    public struct Reply: Sendable {
        public var text: String
        public var closed: Bool

        /// The status code of the first response line, e.g. 400.
        public var status: Int? {
            let parts = text.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return nil }
            return Int(parts[1])
        }

        /// The JSON body after the header block.
        public var json: GQLValue? {
            guard let range = text.range(of: "\r\n\r\n") else { return nil }
            return try? GQLValue(json: String(text[range.upperBound...]))
        }
    }

    public init(port: Int) throws {
        descriptor = try Self.connect(port: port)
    }

    /// A connected socket to 127.0.0.1:`port`, with `receiveBuffer` bytes of receive buffer when given, and Nagle's
    /// delay off when `noDelay`.
    public static func connect(port: Int, receiveBuffer: Int32? = nil, noDelay: Bool = false) throws -> Int32 {
        do {
            return try LoopbackListener.connect(port: port) { descriptor in
                if noDelay {
                    var one: Int32 = 1
                    setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                if var size = receiveBuffer {
                    setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                }
            }
        } catch {
            throw GQLError(.io, "cannot connect to 127.0.0.1:\(port): \(error)")
        }
    }

    /// Connects and sends `text` in one call on the caller's thread: no thread start or task switch comes between
    /// the two (a server's header timeout counts from when it accepted the connection). A request this size goes
    /// into the socket's buffer at once.
    public init(port: Int, sending text: String) throws {
        descriptor = try Self.connect(port: port)
        _ = Self.send(descriptor, Array(text.utf8), timeout: 10)
    }

    deinit { close(descriptor) }

    /// Sends `text` (as UTF-8); a connection the server already closed is not an error here.
    public func send(_ text: String) async {
        _ = await sendUntilBlocked(Array(text.utf8), timeout: 10)
    }

    /// Sends `bytes` until the server stops taking them: returns how many were sent before one send made no
    /// progress for `timeout` seconds (or failed).
    public func sendUntilBlocked(_ bytes: [UInt8], timeout: Int = 1) async -> Int {
        await onThread { [descriptor] in Self.send(descriptor, bytes, timeout: timeout) }
    }

    /// Sends `bytes` on `descriptor`, blocking: how many were sent before an error or `timeout` seconds without
    /// progress.
    public static func send(_ descriptor: Int32, _ bytes: [UInt8], timeout: Int) -> Int {
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { break }
            offset += sent
        }
        return offset
    }

    /// Closes the sending side (a half-close): the server reads the end of its input after what was sent.
    public func shutdownWrite() { Self.shutdownWrite(descriptor) }

    /// Closes the sending side of `descriptor`.
    public static func shutdownWrite(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = shutdown(descriptor, Int32(SHUT_WR))
        #else
            _ = shutdown(descriptor, SHUT_WR)
        #endif
    }

    /// Reads until the server closes the connection, or until `timeout` seconds pass without data.
    public func readUntilClosed(timeout: Int = 10) async -> Reply {
        await onThread { [descriptor] in
            var (received, chunk) = Self.startReading(descriptor, timeout: timeout)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += chunk[0..<count]
                } else {
                    let closed = count == 0 || errno == ECONNRESET
                    return Reply(text: String(decoding: received, as: UTF8.self), closed: closed)
                }
            }
        }
    }

    /// Reads until `count` whole responses (each framed by its `Content-Length`) have arrived, the server closes
    /// the connection, or `timeout` seconds pass without data; returns the responses' status codes and bodies.
    public func readAnswers(_ count: Int, timeout: Int = 10) async -> [(status: Int, body: String)] {
        await onThread { [descriptor] in
            var (received, chunk) = Self.startReading(descriptor, timeout: timeout)
            while true {
                let answers = Self.answers(in: received)
                if answers.count >= count { return answers }
                let read = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard read > 0 else { return answers }
                received += chunk[0..<read]
            }
        }
    }

    /// The complete responses at the start of `bytes`.
    private static func answers(in bytes: [UInt8]) -> [(status: Int, body: String)] {
        var answers: [(status: Int, body: String)] = []
        var rest = bytes[...]
        let separator = Array("\r\n\r\n".utf8)
        while let end = rest.indices.first(where: { rest[$0...].starts(with: separator) }) {
            let head = String(decoding: rest[..<end], as: UTF8.self)
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = end + separator.count
            guard rest.endIndex - bodyStart >= length else { break }
            let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            answers.append((status, String(decoding: rest[bodyStart..<(bodyStart + length)], as: UTF8.self)))
            rest = rest[(bodyStart + length)...]
        }
        return answers
    }

    /// Sets the receive timeout and returns an empty buffer for what arrives and a chunk to read into.
    private static func startReading(_ descriptor: Int32, timeout: Int) -> (received: [UInt8], chunk: [UInt8]) {
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        return ([], [UInt8](repeating: 0, count: 65536))
    }
}
