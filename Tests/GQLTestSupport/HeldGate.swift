import GQLCore

/// Holds the first caller of ``pass(_:)`` with the name it was made for until the test calls ``open()``; other
/// names, and later callers, pass at once. With GQLDevServer's `beforeSubscriptionStarts` it keeps one
/// subscription unregistered for exactly as long as a test needs, deciding by outcome rather than by sleeping.
///
/// ```swift
/// let gate = HeldGate(holding: "OnUpdateNote")
/// configuration.beforeSubscriptionStarts = { await gate.pass($0) }
/// await gate.held()      // the server is registering OnUpdateNote, and waits
/// gate.open()
/// ```
public final class HeldGate: Sendable {
    public let name: String
    private let entered = GQLWaiter<Void>()
    private let opened = GQLWaiter<Void>()
    /// Whether a caller was held (or the gate opened): every later one passes.
    private let used = GQLLocked(false)

    public init(holding name: String) {
        self.name = name
    }

    /// For the first call with ``name``, waits until ``open()``; returns at once for any other.
    public func pass(_ name: String?) async {
        guard name == self.name,
            used.withLock({ used in
                defer { used = true }
                return !used
            })
        else { return }
        entered.resume(returning: ())
        await opened.wait(whenCancelled: ())
    }

    /// Returns once ``name`` reached the gate.
    public func held() async {
        await entered.wait(whenCancelled: ())
    }

    /// Lets ``name`` through, now and from now on.
    public func open() {
        used.withLock { $0 = true }
        opened.resume(returning: ())
    }
}
