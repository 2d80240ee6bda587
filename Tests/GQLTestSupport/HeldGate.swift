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
    /// The name held; nil when the gate holds a caller by its number (``init(holdingCall:)``).
    public let name: String?
    private let number: Int
    private let entered = GQLWaiter<Void>()
    private let opened = GQLWaiter<Void>()
    /// Whether a caller was held (or the gate opened): every later one passes.
    private let used = GQLLocked(false)
    private let names = GQLLocked<[String?]>([])

    public init(holding name: String) {
        self.name = name
        number = 0
    }

    /// Holds the `number`th caller, whatever its name (the ones before it are registered by then).
    public init(holdingCall number: Int) {
        name = nil
        self.number = number
    }

    /// The names that reached the gate so far, in order.
    public var passed: [String?] { names.withLock { $0 } }

    /// For the first call with ``name`` (or the call numbered so), waits until ``open()``; returns at once for any
    /// other.
    public func pass(_ name: String?) async {
        let count = names.withLock { names in
            names.append(name)
            return names.count
        }
        guard self.name == nil ? count == number : name == self.name,
            used.withLock({ used in
                defer { used = true }
                return !used
            })
        else { return }
        entered.resume(returning: ())
        await opened.wait(whenCancelled: ())
    }

    /// Returns once the caller held reached the gate.
    public func held() async {
        await entered.wait(whenCancelled: ())
    }

    /// Lets the caller held through, and every one from now on.
    public func open() {
        used.withLock { $0 = true }
        opened.resume(returning: ())
    }
}
