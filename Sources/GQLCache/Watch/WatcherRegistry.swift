import GQLCore

/// Which watcher depends on which record: an index from record key to watchers, so a write wakes only the
/// watchers whose last answer read a record it changed, at a cost that does not grow with the watchers it leaves
/// alone.
final class WatcherRegistry: Sendable {
    private struct State {
        var nextID = 0
        var wakers: [Int: AsyncStream<Void>.Continuation] = [:]
        var dependencies: [Int: Set<String>] = [:]
        var watchers: [String: Set<Int>] = [:]
        /// Counts notifications, so a watcher can tell a change that came while it was reading.
        var changes: UInt64 = 0
    }

    private let state = GQLLocked(State())

    /// Registers a watcher woken through `waker`; returns its id.
    func add(_ waker: AsyncStream<Void>.Continuation) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.wakers[state.nextID] = waker
            return state.nextID
        }
    }

    func remove(_ id: Int) {
        state.withLock { state in
            state.wakers[id]?.finish()
            state.wakers[id] = nil
            for key in state.dependencies[id] ?? [] { state.watchers[key]?.remove(id) }
            state.dependencies[id] = nil
        }
    }

    /// How many watchers are registered.
    var count: Int { state.withLock { $0.wakers.count } }

    /// The notification count now: pass it to ``setDependencies(_:of:readSince:)`` after reading.
    var changeCount: UInt64 { state.withLock { $0.changes } }

    /// Records what watcher `id`'s last answer read. When a notification came since `count` (taken before the
    /// read), the watcher is woken at once: the change may have missed the read.
    func setDependencies(_ keys: Set<String>, of id: Int, readSince count: UInt64) {
        state.withLock { state in
            guard state.wakers[id] != nil else { return }
            let old = state.dependencies[id] ?? []
            for key in old.subtracting(keys) {
                state.watchers[key]?.remove(id)
                if state.watchers[key]?.isEmpty == true { state.watchers[key] = nil }
            }
            for key in keys.subtracting(old) { state.watchers[key, default: []].insert(id) }
            state.dependencies[id] = keys
            if state.changes != count { state.wakers[id]?.yield() }
        }
    }

    /// Wakes the watchers that depend on any of `keys`.
    func notify(_ keys: Set<String>) {
        guard !keys.isEmpty else { return }
        state.withLock { state in
            state.changes &+= 1
            var woken: Set<Int> = []
            for key in keys {
                for id in state.watchers[key] ?? [] where woken.insert(id).inserted { state.wakers[id]?.yield() }
            }
        }
    }

    /// Wakes every watcher (after ``GQLCache/clear()``).
    func notifyAll() {
        state.withLock { state in
            state.changes &+= 1
            for waker in state.wakers.values { waker.yield() }
        }
    }
}
