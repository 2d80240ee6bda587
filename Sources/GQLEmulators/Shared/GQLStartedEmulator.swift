import Foundation
import GQLCore

/// An emulator that ``GQLEmulator/start()`` started: where it listens, and how to stop it.
///
/// ```swift
/// let started = try await GQLStorageEmulator(configuration: configuration).start()
/// let url = started.url          // http://127.0.0.1:PORT
/// await started.shutdown()
/// ```
public final class GQLStartedEmulator: Sendable {
    /// The emulator's base URL, `http://127.0.0.1:PORT`.
    public let url: String
    /// The port it listens on.
    public let port: Int
    private let stop: @Sendable () async -> Void
    private let stopped = GQLLocked(false)

    package init(url: String, stop: @escaping @Sendable () async -> Void) {
        self.url = url
        self.port = URLComponents(string: url)?.port ?? 0
        self.stop = stop
    }

    /// Stops the emulator gracefully and waits until it has stopped; later calls return at once.
    public func shutdown() async {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { await stop() }
    }
}
