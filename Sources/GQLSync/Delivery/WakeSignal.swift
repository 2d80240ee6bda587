import GQLCore

/// Wakes the delivery loop: a signal that is remembered when nobody waits, and a wait that ends at a signal,
/// at a deadline, or on cancellation, whichever comes first.
final class WakeSignal: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Counts waits, so a timer of an earlier wait cannot end a later one.
        var generation = 0
    }

    private let state = GQLLocked(State())

    /// Wakes the current wait, or the next one.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait), at `deadline`, or when the task is
    /// cancelled.
    func wait(until deadline: ContinuousClock.Instant?) async {
        let generation = state.withLock { state -> Int? in
            if state.signalled {
                state.signalled = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                self?.end(generation)
            }
        }
        defer { timer?.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    // A signal or the timer may have come between the check above and here.
                    if state.signalled || state.generation != generation || Task.isCancelled {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.end(nil)
        }
    }

    /// Ends the wait of `generation` (any wait when `nil`).
    private func end(_ generation: Int?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard generation == nil || generation == state.generation else { return nil }
            state.generation += 1
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
