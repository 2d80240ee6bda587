import Foundation

/// A value behind a lock, for state shared between threads.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux cannot see a Mutex's futex-based
/// locking and reports races that are not there; a pthread lock it understands, so `make tsan` stays
/// meaningful.
///
/// ``withLock(_:)`` is `@inlinable` and the class `@usableFromInline`, so a caller in another module gets a copy
/// specialised for its state and closure (Swift 6.3 serialises the body of an `@inlinable` method of a `package`
/// generic class for other modules only when the class itself is `@usableFromInline`).
///
/// A wait for a value handed over under the lock is ``GQLWaiters``'s job (``wait(for:in:whenCancelled:)``).
@usableFromInline package final class GQLLocked<State>: @unchecked Sendable {
    // Safety: `state` is only read or written inside `withLock`, with `lock` held. That lock is also why the
    // run-time exclusivity check on `state` is left out: two accesses can never overlap.
    @usableFromInline let lock = NSLock()
    @usableFromInline @exclusivity(unchecked) var state: State

    package init(_ state: State) { self.state = state }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
