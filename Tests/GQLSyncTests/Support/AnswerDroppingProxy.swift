import Foundation
import GQLCore
import GQLTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of a server that loses answers on purpose: every `dropEvery`-th answer the
/// server sends back is not passed on; the proxy closes the client's connection instead. The server has run the
/// request, and the client cannot tell: the case idempotency keys are for. Blocking socket calls run on threads
/// of their own, each wait bounded.
final class AnswerDroppingProxy: Sendable {
    let port: Int
    var url: String { "http://127.0.0.1:\(port)/graphql" }
    /// How many answers were dropped.
    var dropped: Int { state.withLock { $0.dropped } }

    private struct State {
        var answers = 0
        var dropped = 0
        var stopped = false
    }

    private let state = GQLLocked(State())

    /// Listens on a free port and forwards each connection to 127.0.0.1:`target`.
    init(target: Int, dropEvery: Int) throws {
        let (listener, port) = try LoopbackListener.open(backlog: 64)
        self.port = port
        let state = state
        LoopbackListener.serve(listener, until: { state.withLock { $0.stopped } }) { client in
            guard let upstream = try? LoopbackListener.connect(port: target) else {
                close(client)
                return
            }
            Self.pump(client, upstream, state: state, dropEvery: dropEvery)
        }
    }

    deinit { stop() }

    /// Stops accepting and closes every connection within 50 ms.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Passes bytes both ways until either side closes, the proxy stops, or an answer is to be dropped.
    private static func pump(_ client: Int32, _ upstream: Int32, state: GQLLocked<State>, dropEvery: Int) {
        defer {
            close(client)
            close(upstream)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let answerStart = Array("HTTP/1.".utf8)
        while !state.withLock({ $0.stopped }) {
            guard let ready = readable([client, upstream], milliseconds: 50) else { continue }
            let from = ready == 0 ? client : upstream
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            if from == upstream, buffer[..<count].starts(with: answerStart) {
                let drop = state.withLock { state -> Bool in
                    state.answers += 1
                    guard state.answers % dropEvery == 0 else { return false }
                    state.dropped += 1
                    return true
                }
                if drop { return }
            }
            guard sendAll(from == client ? upstream : client, buffer[..<count]) else { return }
        }
    }

    private static func sendAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// The index of the first of `descriptors` with something to read (or closed), or nil after `milliseconds`.
    private static func readable(_ descriptors: [Int32], milliseconds: Int32) -> Int? {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&entries, nfds_t(entries.count), milliseconds) > 0 else { return nil }
        return entries.firstIndex { $0.revents != 0 }
    }
}
