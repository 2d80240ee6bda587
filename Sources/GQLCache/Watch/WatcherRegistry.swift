import GQLCore

/// Which watcher depends on which record: an index from record key to watchers, so a write wakes only the
/// watchers whose last answer read a record it changed, at a cost that does not grow with the watchers it leaves
/// alone.
final class WatcherRegistry: Sendable {
    fileprivate struct State {
        var nextID = 0
        var wakers: [Int: AsyncStream<Void>.Continuation] = [:]
        var dependencies: [Int: Set<RecordKey>] = [:]
        var watchers: [RecordKey: Set<Int>] = [:]
        /// Counts notifications, so a watcher can tell a change that came while it was reading.
        var changes: UInt64 = 0
        /// Of the watched records, the notification counts of the last change of each by the app (a manual
        /// write, a layer, an eviction, a clear) and by a server's answer, kept apart so a server's answer does
        /// not hide an earlier change of the app's that a watcher has not read yet.
        var lastChange: [RecordKey: (byApp: UInt64, byServer: UInt64)] = [:]

        /// Watcher `id` no longer depends on record `key`; a record no watcher depends on is forgotten.
        mutating func unwatch(_ key: RecordKey, by id: Int) {
            watchers[key]?.remove(id)
            guard watchers[key]?.isEmpty == true else { return }
            watchers[key] = nil
            lastChange[key] = nil
        }
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
            for key in state.dependencies[id] ?? [] { state.unwatch(key, by: id) }
            state.dependencies[id] = nil
        }
    }

    /// How many watchers are registered.
    var count: Int { state.withLock { $0.wakers.count } }

    /// The notification count now: pass it to ``setDependencies(_:of:readSince:)`` after reading.
    var changeCount: UInt64 { state.withLock { $0.changes } }

    /// Records what watcher `id`'s last answer read. When a notification came since `count` (taken before the
    /// read), the watcher is woken at once: the change may have missed the read.
    func setDependencies(_ keys: Set<RecordKey>, of id: Int, readSince count: UInt64) {
        state.withLock { state in
            guard state.wakers[id] != nil else { return }
            let old = state.dependencies[id] ?? []
            for key in old.subtracting(keys) { state.unwatch(key, by: id) }
            for key in keys.subtracting(old) { state.watchers[key, default: []].insert(id) }
            state.dependencies[id] = keys
            if state.changes != count { state.wakers[id]?.yield() }
        }
    }

    /// Wakes the watchers that depend on any of `keys`. `fromServer`: the records a server's answer wrote in this
    /// change (changed or not), which ``changes(of:since:)`` then tells apart from the app's own writes.
    func notify(_ keys: Set<RecordKey>, fromServer written: Set<RecordKey> = []) {
        guard !keys.isEmpty else { return }
        state.withLock { state in
            state.changes &+= 1
            let now = state.changes
            var woken: Set<Int> = []
            for key in keys {
                guard let ids = state.watchers[key] else { continue }
                if !written.contains(key) { state.lastChange[key, default: (0, 0)].byApp = now }
                for id in ids where woken.insert(id).inserted { state.wakers[id]?.yield() }
            }
            for key in written where state.watchers[key] != nil {
                state.lastChange[key, default: (0, 0)].byServer = now
            }
        }
    }

    /// Wakes every watcher (after ``GQLCache/clear()``).
    func notifyAll() {
        state.withLock { state in
            state.changes &+= 1
            let now = state.changes
            for key in state.watchers.keys { state.lastChange[key, default: (0, 0)].byApp = now }
            for waker in state.wakers.values { waker.yield() }
        }
    }

    /// What changed of records since a read.
    enum ChangesSince: Equatable {
        /// Nothing: a wake for a change the read already saw.
        case none
        /// Only servers' answers (another watch's, a fetch's, the watcher's own): every record that changed holds
        /// what a server said since.
        case byServer
        /// At least one change that was not a server's answer (a manual write, a layer, an eviction, a clear).
        case other
    }

    /// How the records of `keys` changed after notification `count` (taken before a watcher's previous read).
    func changes(of keys: Set<RecordKey>, since count: UInt64) -> ChangesSince {
        state.withLock { $0.changes(of: keys, since: count) }
    }

    /// What a woken watcher reads against, taken in one step: the notification count now (pass it to
    /// ``setDependencies(_:of:readSince:)`` after the read) and how the records its last answer read (its
    /// dependencies) changed after notification `count` (taken before that read) up to now.
    ///
    /// Taken before the read, not after it: a change that comes while the watcher reads is not one the read
    /// is judged by (it may not have seen it), and wakes the watcher again. Judged after the read, a manual write
    /// made while a watcher read a server's `no-cache` answer counted as a change of the app's that the answer
    /// held, and the watcher asked the server for an answer it had just been given.
    func wake(_ id: Int, since count: UInt64) -> (count: UInt64, changes: ChangesSince) {
        state.withLock { state in
            (state.changes, state.changes(of: state.dependencies[id] ?? [], since: count))
        }
    }
}

extension WatcherRegistry.State {
    fileprivate func changes(of keys: Set<RecordKey>, since count: UInt64) -> WatcherRegistry.ChangesSince {
        var changed = false
        for key in keys {
            guard let last = lastChange[key] else { continue }
            if last.byApp > count { return .other }
            if last.byServer > count { changed = true }
        }
        return changed ? .byServer : .none
    }
}
