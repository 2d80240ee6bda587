import GQLCore
import GQLNet

/// Holds a live sync's subscription events while its gap-filling pull runs, so that they are written after the
/// pulled rows, in the order they arrived.
///
/// An event that arrives during the pull may be newer than what the pull read (an update after its read) or
/// older (an update the read already saw). Written after the pulled rows, each event meets the row the pull left:
/// where the table has `_version`, ``ServerRows`` keeps whichever is newer; a delete the pull's read predates
/// stays a delete instead of being written back by the older pulled row. What no version settles (a held update
/// of a row a later change deleted without an event the app hears, or two subscriptions' events held out of the
/// socket's order) the live sync settles with one more pull after writing them (``needsAnotherPull``).
///
/// At most ``limit`` events are held (a pull may take long); past it they are the caller's to write at once, and
/// the pull is run again after this one.
final class LiveHold: Sendable {
    private struct State {
        var holding = false
        var held: [GQLResult] = []
        /// Whether anything was held, or refused past the limit, since ``begin()``.
        var touched = false
    }
    private let state = GQLLocked(State())
    /// The most events held at once.
    let limit: Int

    init(limit: Int = 10_000) {
        self.limit = limit
    }

    /// From now on events are held.
    func begin() {
        state.withLock {
            $0.holding = true
            $0.touched = false
        }
    }

    /// Whether `result` was held (a pull runs and fewer than ``limit`` are held); the caller writes it itself
    /// when not.
    func hold(_ result: GQLResult) -> Bool {
        state.withLock { state in
            guard state.holding else { return false }
            state.touched = true
            guard state.held.count < limit else { return false }
            state.held.append(result)
            return true
        }
    }

    /// The events held so far, oldest first; holding goes on.
    func drain() -> [GQLResult] {
        state.withLock { state in
            defer { state.held = [] }
            return state.held
        }
    }

    /// Whether an event was held or written past the limit since ``begin()`` or the last call (which resets it):
    /// the rows a pull wrote before may then be older than the events written after it.
    func needsAnotherPull() -> Bool {
        state.withLock { state in
            defer { state.touched = false }
            return state.touched
        }
    }

    /// The events held so far, oldest first; when there are none, holding ends (an event after this call is the
    /// caller's to write).
    func take() -> [GQLResult] {
        state.withLock { state in
            defer { state.held = [] }
            if state.held.isEmpty { state.holding = false }
            return state.held
        }
    }

    /// How many events are held now.
    var count: Int { state.withLock { $0.held.count } }

    /// Whether events are held now (from ``begin()`` until ``take()`` finds none).
    var isHolding: Bool { state.withLock { $0.holding } }
}
