import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listener on 127.0.0.1 that takes one HTTP connection, reads the request and never answers: the point at
/// which a request is in flight, reported as an event instead of guessed with a sleep. It then reports when
/// the client closes the connection. Blocking socket calls run on a thread of their own, each bounded by
/// `timeout`.
final class HangingHTTPServer: Sendable {
    enum Event: Sendable, Equatable {
        /// A whole request header block arrived.
        case requestReceived
        /// The client closed the connection (end of stream or reset).
        case closedByClient
    }

    let port: Int
    /// The events, in order; finishes after `.closedByClient` or on a timeout.
    let events: AsyncStream<Event>
    private let listener: Int32

    init(timeout: Int = 60) throws {
        #if canImport(Glibc)
            let kind = Int32(SOCK_STREAM.rawValue)
        #else
            let kind = SOCK_STREAM
        #endif
        let listener = socket(AF_INET, kind, 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        self.listener = listener
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        self.events = events
        Thread.detachNewThread {
            defer { continuation.finish() }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var limit = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16384)
            var announced = false
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN) {
                    continuation.yield(.closedByClient)
                    return
                }
                if count < 0 {
                    if errno == EAGAIN { return }  // the timeout: neither a request nor a close
                    continue
                }
                guard !announced else { continue }
                received += chunk[..<count]
                if received.count >= 4, received.indices.dropFirst(3).contains(where: {
                    received[($0 - 3)...$0].elementsEqual("\r\n\r\n".utf8)
                }) {
                    announced = true
                    continuation.yield(.requestReceived)
                }
            }
        }
    }

    deinit { close(listener) }
}
