/// One value awaited by one task and handed over by whichever source comes first: a result, a timer, the task's
/// cancellation. Later hand-overs are ignored.
///
/// ```swift
/// let done = GQLWaiter<Bool>()
/// let work = Task { _ = await job.value; done.resume(returning: true) }
/// let timer = Task { try await Task.sleep(for: .seconds(3)); done.resume(returning: false) }
/// let finished = await done.wait(whenCancelled: false)   // true, or false after 3 s or when cancelled
/// ```
package final class GQLWaiter<Value: Sendable>: Sendable {
    private let state: GQLLocked<GQLWaiters<Value, Never>>
    private let ticket: GQLWaiters<Value, Never>.Ticket

    package init() {
        var waiters = GQLWaiters<Value, Never>()
        ticket = waiters.add()
        state = GQLLocked(waiters)
    }

    /// Hands `value` to the wait (before it began, or during it); false when a value or the cancellation came
    /// first.
    @discardableResult
    package func resume(returning value: Value) -> Bool {
        guard let resumption = state.withLock({ $0.resume(ticket, with: .success(value)) }) else { return false }
        resumption.run()
        return true
    }

    /// The value handed over, waiting for it; `cancelled` when the task is cancelled first. Call it once.
    package func wait(whenCancelled cancelled: Value) async -> Value {
        await state.wait(for: ticket, in: \.self) { _ in .success(cancelled) }
    }
}
