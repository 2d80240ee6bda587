import Foundation

/// A value behind a lock, for state shared between threads.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux cannot see a Mutex's futex-based
/// locking and reports races that are not there; a pthread lock it understands, so `make tsan` stays
/// meaningful.
package final class GQLLocked<State>: @unchecked Sendable {
    // Safety: `state` is only read or written inside `withLock`, with `lock` held.
    private let lock = NSLock()
    private var state: State

    package init(_ state: State) { self.state = state }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
