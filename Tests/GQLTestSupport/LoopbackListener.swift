import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening TCP socket on 127.0.0.1 and a free port, for the raw-socket servers of the tests (a server that
/// never answers, one that answers anything a script says).
///
/// ```swift
/// let (listener, port) = try LoopbackListener.open(backlog: 64)
/// defer { close(listener) }
/// ```
public enum LoopbackListener {
    /// A socket bound to 127.0.0.1 on a port the system picks, listening with `backlog`; closed by the caller.
    public static func open(backlog: Int32) throws -> (descriptor: Int32, port: Int) {
        let listener = try streamSocket()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, backlog) == 0
                    && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Accepts connections on `listener` on a thread of its own until `stopped()` (asked every 50 ms), handing each
    /// to `handle` on a thread of its own; then closes the listener.
    public static func serve(
        _ listener: Int32, until stopped: @escaping @Sendable () -> Bool,
        _ handle: @escaping @Sendable (_ connection: Int32) -> Void
    ) {
        Thread.detachNewThread {
            defer { close(listener) }
            while !stopped() {
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) > 0 else { continue }
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { continue }
                Thread.detachNewThread { handle(connection) }
            }
        }
    }

    /// A socket connected to 127.0.0.1:`port`, after `configure` set its options (a receive buffer size must be
    /// set before the connection is made); closed by the caller.
    public static func connect(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
        let descriptor = try streamSocket()
        configure(descriptor)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        return descriptor
    }
}

extension LoopbackListener {
    /// A new TCP socket.
    fileprivate static func streamSocket() throws -> Int32 {
        #if canImport(Glibc)
            let kind = Int32(SOCK_STREAM.rawValue)
        #else
            let kind = SOCK_STREAM
        #endif
        let descriptor = socket(AF_INET, kind, 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        return descriptor
    }
}

#if canImport(Glibc)
    private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
    private let systemConnect = Darwin.connect
#endif
