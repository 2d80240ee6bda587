import GQLCore

/// The answer of a queued mutation, awaited once.
final class QueuedAnswer: Sendable {
    private struct State {
        var json: String?
        var waiter: CheckedContinuation<String, Never>?
    }

    private let state: GQLLocked<State>

    init(ready json: String? = nil) {
        state = GQLLocked(State(json: json))
    }

    /// Sets the answer and wakes the waiter.
    func fulfil(_ json: String) {
        let waiter = state.withLock { state -> CheckedContinuation<String, Never>? in
            state.json = json
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: json)
    }

    /// The answer, once there is one.
    func json() async -> String {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> String? in
                if let json = state.json { return json }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
