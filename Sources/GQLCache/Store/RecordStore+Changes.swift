import GQLCore

/// Which records each recent change touched, by the generation it made: how a watcher tells whether the records
/// an answer read changed after a server's answer was stored (review L1), rather than whether anything changed.
extension RecordStore {
    /// The recent changes, oldest first, bounded: past ``capacity`` entries or ``keyCapacity`` keys held, the
    /// oldest go, and a question about a time before the ones kept is answered "changed" (the safe side).
    struct ChangeLog {
        /// Most entries kept.
        static let capacity = 64
        /// Most keys kept across the entries (a large answer's write holds thousands): memory stays bounded.
        static let keyCapacity = 20_000

        /// Each change: the generation it made and the keys it touched (`nil`: every record, a clear).
        private var entries: [(generation: UInt64, keys: Set<RecordKey>?)] = []
        private var heldKeys = 0
        /// Changes at or before this generation may have left the log.
        private var floor: UInt64 = 0

        /// Notes the change that made `generation`, of `keys` (`nil`: of every record).
        mutating func note(_ generation: UInt64, _ keys: Set<RecordKey>?) {
            entries.append((generation, keys))
            heldKeys += keys?.count ?? 0
            var dropped = 0
            while entries.count - dropped > 1,
                entries.count - dropped > Self.capacity || heldKeys > Self.keyCapacity
            {
                heldKeys -= entries[dropped].keys?.count ?? 0
                floor = entries[dropped].generation
                dropped += 1
            }
            if dropped > 0 { entries.removeFirst(dropped) }
        }

        /// Whether a change after `generation` touched any of `keys`: `true` too when the log no longer reaches
        /// back that far.
        func touched(_ keys: Set<RecordKey>, after generation: UInt64) -> Bool {
            guard generation >= floor else { return true }
            for entry in entries.reversed() {
                guard entry.generation > generation else { break }
                guard let touched = entry.keys else { return true }
                if !touched.isDisjoint(with: keys) { return true }
            }
            return false
        }
    }

    /// Whether a write, a removal or an optimistic layer changed any record of `keys` after the change that made
    /// `generation` (``mergeNotingGeneration(_:receivedAt:expiresAt:)``'s).
    func changed(_ keys: Set<RecordKey>, after generation: UInt64) -> Bool {
        memory.withLock { $0.changes.touched(keys, after: generation) }
    }
}

extension RecordStore.Memory {
    /// A change of what reads see, of the records of `keys` (`nil`: of every record): a new generation, noted
    /// with those keys. Returns the generation.
    @discardableResult
    mutating func noteChange(_ keys: Set<RecordKey>?) -> UInt64 {
        generation &+= 1
        changes.note(generation, keys)
        return generation
    }
}
