import GQLCore

/// The operations running on one WebSocket, by the client's id (its UTF-8 bytes: ids `String` holds equal, such as
/// `é` as U+00E9 and as `e` + U+0301, are two operations).
///
/// Each operation runs in its own task, so a long subscription never blocks the socket's other messages.
/// An id is taken from the moment ``start(_:_:)`` accepts it until its task ends or ``stop(_:)`` cancels it;
/// ``stopAll()`` cancels everything when the socket goes away.
final class OperationRegistry: Sendable {
    /// What ``start(_:_:)`` did.
    enum StartResult: Equatable {
        case started
        case duplicate
        case closed
        /// As many operations as allowed are running.
        case full
    }

    private struct Entry {
        let token: Int
        let task: Task<Void, Never>
    }

    private struct State {
        var running: [GQLExactText: Entry] = [:]
        var nextToken = 0
        var isClosed = false
    }

    private let state = GQLLocked(State())

    /// The most operations running at once (``GQLDevServer/Limits/maxSubscriptionsPerSocket``).
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Runs `operation` under `id` unless an operation with that id is running, or ``limit`` operations are.
    func start(_ id: String, _ operation: @escaping @Sendable () async -> Void) -> StartResult {
        state.withLock { state in
            guard !state.isClosed else { return .closed }
            guard state.running[GQLExactText(id)] == nil else { return .duplicate }
            guard state.running.count < limit else { return .full }
            state.nextToken += 1
            let token = state.nextToken
            // `finished` takes this lock, so it runs after the entry is stored below.
            let task = Task {
                await operation()
                self.finished(id, token: token)
            }
            state.running[GQLExactText(id)] = Entry(token: token, task: task)
            return .started
        }
    }

    /// Cancels the operation `id`; returns whether it was running.
    @discardableResult
    func stop(_ id: String) -> Bool {
        let entry = state.withLock { $0.running.removeValue(forKey: GQLExactText(id)) }
        entry?.task.cancel()
        return entry != nil
    }

    /// Whether an operation with `id` is running.
    func isRunning(_ id: String) -> Bool {
        state.withLock { $0.running[GQLExactText(id)] != nil }
    }

    /// Cancels every operation and refuses new ones.
    func stopAll() {
        let entries = state.withLock { state in
            state.isClosed = true
            defer { state.running = [:] }
            return Array(state.running.values)
        }
        for entry in entries { entry.task.cancel() }
    }

    private func finished(_ id: String, token: Int) {
        state.withLock { state in
            if state.running[GQLExactText(id)]?.token == token { state.running[GQLExactText(id)] = nil }
        }
    }
}
