import GQLCore

/// Wakes the delivery loop: a signal that is remembered when nobody waits, and a wait that ends at a signal,
/// at a deadline, or on cancellation, whichever comes first.
final class WakeSignal: Sendable {
    private struct State {
        var signalled = false
        /// The loop's wait, while it waits; a timer ends only the wait it was started for.
        var waiters = GQLWaiters<Void, Never>()
    }

    private let state = GQLLocked(State())

    /// Wakes the current wait, or the next one.
    func signal() {
        let resumption = state.withLock { state -> GQLWaiters<Void, Never>.Resumption? in
            guard let resumption = state.waiters.resumeFirst(with: .success(())) else {
                state.signalled = true
                return nil
            }
            return resumption
        }
        resumption?.run()
    }

    /// Returns at the next signal (at once if one came since the last wait), at `deadline`, or when the task is
    /// cancelled.
    func wait(until deadline: ContinuousClock.Instant?) async {
        let ticket = state.withLock { state -> GQLWaiters<Void, Never>.Ticket? in
            if state.signalled {
                state.signalled = false
                return nil
            }
            return state.waiters.add()
        }
        guard let ticket else { return }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self?.state.withLock { $0.waiters.resume(ticket, with: .success(())) }?.run()
            }
        }
        defer { timer?.cancel() }
        await state.wait(for: ticket, in: \.waiters) { _ in .success(()) }
    }
}
