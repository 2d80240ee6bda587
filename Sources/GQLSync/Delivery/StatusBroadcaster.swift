import GQLCore

/// Hands every status to every subscriber, in the order they were published.
///
/// It keeps no status of its own: the driver makes one only while someone listens (``isListenedTo``), and hands
/// a new subscriber the current one, under the driver's lock, so none is missed or seen twice.
final class StatusBroadcaster: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<GQLSync.Status>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = GQLLocked(State())

    /// Whether any sequence is being iterated (checked before a status is made: most enqueues have no listener).
    var isListenedTo: Bool { state.withLock { !$0.subscribers.isEmpty } }

    /// A sequence that starts with `first` (the current status, without its event) and then gets every status
    /// published after it; one that ends at once after ``finish()``.
    func subscribe(first: GQLSync.Status) -> AsyncStream<GQLSync.Status> {
        let (stream, continuation) = AsyncStream.makeStream(of: GQLSync.Status.self, bufferingPolicy: .unbounded)
        continuation.yield(first)
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `status` (under the lock, so subscribers see statuses in publishing order).
    func publish(_ status: GQLSync.Status) {
        state.withLock { state in
            for continuation in state.subscribers.values { continuation.yield(status) }
        }
    }

    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
