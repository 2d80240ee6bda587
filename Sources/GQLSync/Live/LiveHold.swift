import GQLCore
import GQLNet

/// Holds a live sync's subscription events while its gap-filling pull runs, so that they are written after the
/// pulled rows, in the order they arrived.
///
/// An event that arrives during the pull may be newer than what the pull read (an update after its read) or
/// older (an update the read already saw). Written after the pulled rows, each event meets the row the pull left:
/// where the table has `_version`, ``ServerRows`` keeps whichever is newer; a delete the pull's read predates
/// stays a delete instead of being written back by the older pulled row.
final class LiveHold: Sendable {
    private struct State {
        var holding = false
        var held: [GQLResult] = []
    }
    private let state = GQLLocked(State())

    /// From now on events are held.
    func begin() {
        state.withLock { $0.holding = true }
    }

    /// Whether `result` was held (a pull runs); the caller writes it itself when not.
    func hold(_ result: GQLResult) -> Bool {
        state.withLock { state in
            guard state.holding else { return false }
            state.held.append(result)
            return true
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
}
