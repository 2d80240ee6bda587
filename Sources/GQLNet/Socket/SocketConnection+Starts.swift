import GQLCore

/// Waiting until the server has started the subscriptions: what a caller needs before it reads state that the
/// subscriptions' events would otherwise have to bring (GQLSync's gap-filling pull).
extension SocketConnection {
    /// Returns once the server acknowledged (`start_ack`, AppSync's protocol) every subscription live now, or once
    /// each of them ended; throws `.timeout` after `timeout`, `.cancelled` when the calling task is cancelled.
    func startsAcknowledged(within timeout: Duration) async throws {
        let waiter = GQLWaiter<Bool>()
        let key = shared.withLock { shared -> Int? in
            let pending = shared.machine.unacknowledgedSubscriptions
            guard !pending.isEmpty else { return nil }
            shared.nextID += 1
            shared.startWaiters[shared.nextID] = (pending, waiter)
            return shared.nextID
        }
        guard let key else { return }
        let timer = Task {
            try await Task.sleep(for: timeout)
            waiter.resume(returning: false)
        }
        let done = await waiter.wait(whenCancelled: false)
        timer.cancel()
        shared.withLock { _ = $0.startWaiters.removeValue(forKey: key) }
        guard done else {
            if Task.isCancelled { throw GQLError(.cancelled, "waiting for the subscriptions' start_ack was cancelled") }
            throw GQLError(.timeout, "the server did not acknowledge every subscription within \(timeout)")
        }
    }

    /// Subscription `id` was acknowledged or ended: the waiters it was the last one for are done.
    static func startSettled(_ id: String, in shared: inout Shared) -> [Effect] {
        var effects: [Effect] = []
        for key in Array(shared.startWaiters.keys) {
            guard var entry = shared.startWaiters[key], entry.pending.remove(id) != nil else { continue }
            if entry.pending.isEmpty {
                shared.startWaiters[key] = nil
                effects.append(.startsDone(entry.waiter))
            } else {
                shared.startWaiters[key] = entry
            }
        }
        return effects
    }
}
