import Foundation
import NIOCore
import NIOPosix

/// A failure below HTTP and WebSocket in words a person acts on: "connection refused", "host not found" …,
/// instead of the structure NIO describes itself with.
///
/// ```swift
/// describeConnectError(error)   // "connection refused"
/// ```
package func describeConnectError(_ error: any Error) -> String {
    switch error {
    case let error as NIOConnectionError:
        if error.connectionErrors.isEmpty {
            if error.dnsAError != nil || error.dnsAAAAError != nil {
                return "host not found (\(error.host))"
            }
            return "no address to connect to for \(error.host)"
        }
        return Set(error.connectionErrors.map { describeConnectError($0.error) }).sorted().joined(separator: "; ")
    case let error as IOError:
        return describe(errno: error.errnoCode) ?? "\(error)"
    case let error as ChannelError:
        if case .connectTimeout(let amount) = error {
            return "no connection within \(Duration.nanoseconds(amount.nanoseconds))"
        }
        if case .ioOnClosedChannel = error { return "the connection was closed" }
        return "\(error)"
    default:
        return "\(error)"
    }
}

private func describe(errno code: Int32) -> String? {
    switch code {
    case ECONNREFUSED: "connection refused"
    case ECONNRESET: "connection reset by the server"
    case EHOSTUNREACH: "host unreachable"
    case ENETUNREACH: "network unreachable"
    case ETIMEDOUT: "connection timed out"
    case EPIPE: "the server closed the connection"
    default: nil
    }
}
