import GQLCore

/// Which records each recent change touched, by a stamp of its own: how a watcher tells whether the records an
/// answer read changed after a server's answer was stored (review L1), rather than whether anything changed.
///
/// A change is noted before it is seen (review L7): a write, a removal, gc and the byte budget note theirs inside
/// their transaction, before it commits (and before the memory layer takes it); a layer, in the same lock as its
/// change. So whatever a read holds was noted at or before the stamp the read took after its last snapshot or load
/// (``RecordStore/Snapshot/stamp``, ``RecordStore/currentStamp``), and a change noted after that stamp is not in
/// it. A change noted and then rolled back counts as one (the safe side: the answer is labelled the cache's).
extension RecordStore {
    /// The recent changes, oldest first, bounded: past ``capacity`` entries or ``keyCapacity`` keys held, the
    /// oldest go, and a question about a time before the ones kept is answered "changed" (the safe side).
    struct ChangeLog {
        /// Most entries kept.
        static let capacity = 64
        /// Most keys kept across the entries (a large answer's write holds thousands): memory stays bounded.
        static let keyCapacity = 20_000

        /// The stamp of the last change noted.
        private(set) var stamp: UInt64 = 0
        /// Each change: its stamp and the keys it touched (`nil`: every record, a clear).
        private var entries: [(stamp: UInt64, keys: Set<RecordKey>?)] = []
        private var heldKeys = 0
        /// Changes at or before this stamp may have left the log.
        private var floor: UInt64 = 0

        /// Notes a change of `keys` (`nil`: of every record); returns its stamp.
        @discardableResult
        mutating func note(_ keys: Set<RecordKey>?) -> UInt64 {
            stamp &+= 1
            entries.append((stamp, keys))
            heldKeys += keys?.count ?? 0
            var dropped = 0
            while entries.count - dropped > 1,
                entries.count - dropped > Self.capacity || heldKeys > Self.keyCapacity
            {
                heldKeys -= entries[dropped].keys?.count ?? 0
                floor = entries[dropped].stamp
                dropped += 1
            }
            if dropped > 0 { entries.removeFirst(dropped) }
            return stamp
        }

        /// Whether a change noted after `stamp` and at or before `upTo` touched any of `keys`: `true` too when the
        /// log no longer reaches back that far.
        func touched(_ keys: Set<RecordKey>, after stamp: UInt64, upTo: UInt64) -> Bool {
            guard stamp >= floor else { return true }
            for entry in entries.reversed() {
                guard entry.stamp > stamp else { break }
                guard entry.stamp <= upTo else { continue }
                guard let touched = entry.keys else { return true }
                if !touched.isDisjoint(with: keys) { return true }
            }
            return false
        }
    }

    /// Notes a change of `keys` (`nil`: every record) now; returns its stamp. Called before the change is seen.
    @discardableResult
    func noteChange(_ keys: Set<RecordKey>?) -> UInt64 {
        memory.withLock { $0.changes.note(keys) }
    }

    /// The stamp of the last change noted: a read that takes it after loading holds no change noted after it.
    var currentStamp: UInt64 { memory.withLock { $0.changes.stamp } }

    /// Whether a write, a removal or an optimistic layer changed any record of `keys` after the change stamped
    /// `stamp` and at or before `upTo` (the stamp of what a read holds).
    func changed(_ keys: Set<RecordKey>, after stamp: UInt64, upTo: UInt64) -> Bool {
        memory.withLock { $0.changes.touched(keys, after: stamp, upTo: upTo) }
    }
}
