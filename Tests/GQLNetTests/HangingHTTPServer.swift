import Foundation
import GQLTestSupport

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
        let (listener, port) = try LoopbackListener.open(backlog: 1)
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        self.listener = listener
        self.port = port
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
                if received.count >= 4,
                    received.indices.dropFirst(3).contains(where: {
                        received[($0 - 3)...$0].elementsEqual("\r\n\r\n".utf8)
                    })
                {
                    announced = true
                    continuation.yield(.requestReceived)
                }
            }
        }
    }

    deinit { close(listener) }
}
