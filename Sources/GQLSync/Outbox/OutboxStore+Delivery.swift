import Foundation
import GQLCore
import GQLStore

/// The delivery loop's side of the outbox: claims, the journal's fast step and read-ahead, removals and
/// items set aside.
extension OutboxStore {
    /// In one transaction: removes the delivered items, sets aside the failed ones, then claims up to `limit`
    /// pending items in call order, counting an attempt for each before it is sent.
    ///
    /// Counting the attempt first is what makes lazy merging safe: once an item may have reached the server, a
    /// later lazy call cannot merge into it. The claim is one statement (the attempts counted, the items read
    /// back), and the sequence of removed ids is written only when a removed id was the largest.
    ///
    /// With a journal, the usual step of a one-per-request drain commits nothing (``fastAdvance``); the others
    /// also delete the items the journal records, and empty it.
    func advance(remove: [Int64], setAside: [(Int64, GQLSync.Failure)], claim limit: Int) async throws
        -> [OutboxItem]
    {
        if let journal, let items = try await fastAdvance(journal, remove: remove, setAside: setAside, claim: limit) {
            return items
        }
        let engine = engine
        // The journal's records and an attempt the read-ahead handed out go into this commit.
        let recorded = journal?.state.withLock { state -> (ids: [Int64], unrecorded: Int64?) in
            defer {
                state.unrecorded = nil
                state.window = []
                state.stale = false
            }
            return (state.ids, state.unrecorded)
        }
        let removed = (recorded?.ids ?? []) + remove
        let items = try await bookkeeping { tx in
            try deleteRows(removed, in: tx)
            if let unrecorded = recorded?.unrecorded, !remove.contains(unrecorded) {
                _ = try tx.fetchAll(sql: Self.attemptSQL, [unrecorded])
            }
            for (id, failure) in setAside {
                _ = try tx.fetchAll(
                    sql: Self.setAsideSQL, [try failure.jsonValue.jsonString(), GQLDate.string(from: Date()), id])
            }
            var items: [OutboxItem] = []
            if limit > 0 {
                try tx.forEachRow(sql: Self.claimSQL, [.string(engine), .int(Int64(limit))], table: Self.table) {
                    items.append(try self.item(OutboxRow($0), in: tx, body: true))
                }
                // RETURNING gives the rows in no promised order.
                items.sort { $0.id < $1.id }
            }
            if let largest = removed.max(), (items.last?.id ?? 0) < largest {
                try keepLargest(largest, in: tx)
            }
            return items
        }
        if let journal, let recorded {
            try journal.drop(first: recorded.ids.count)
            journal.state.withLock {
                $0.cursor = items.last?.id ?? 0
                $0.handedOut = items.map(\.id)
            }
        }
        return items
    }

    /// The usual step of a one-per-request drain without a commit: the delivered item is appended to the
    /// journal, and the next item comes from the read-ahead when it is `steady` (no call can merge into it, so
    /// counting its attempt in the outbox first is not needed; the attempt is counted in memory, and in the
    /// outbox should it not be delivered). Nil when the step needs the outbox: an item set aside or kept for a
    /// retry, batches, a lazy item next, a retried item put back, nothing read ahead, a full journal, or the end.
    private func fastAdvance(
        _ journal: DeliveryJournal, remove: [Int64], setAside: [(Int64, GQLSync.Failure)], claim limit: Int
    ) async throws -> [OutboxItem]? {
        guard limit == 1, setAside.isEmpty, remove.count <= 1 else { return nil }
        // One lock for the usual step: the record, then the next item from the read-ahead.
        let step = try journal.state.withLock { state -> FastStep in
            guard state.handedOut.allSatisfy(remove.contains) else { return .needsOutbox }
            if let delivered = remove.first {
                state.unrecorded = nil
                guard try journal.append(delivered, into: &state) < DeliveryJournal.capacity else {
                    return .needsOutbox
                }
            }
            guard !state.stale else { return .needsOutbox }
            guard !state.window.isEmpty else { return .readAhead(after: state.cursor, excluding: state.recorded) }
            return Self.handOut(&state).map(FastStep.item) ?? .needsOutbox
        }
        switch step {
        case .needsOutbox:
            return nil
        case .item(let item):
            return [item]
        case .readAhead(let cursor, let recorded):
            let ahead = try await readAhead(after: cursor, excluding: recorded)
            guard let last = ahead.last else { return nil }
            return journal.state.withLock { state in
                state.window = ahead.reversed()
                state.cursor = last.item.id
                return Self.handOut(&state).map { [$0] }
            }
        }
    }

    /// What the usual step found under the journal's lock.
    private enum FastStep {
        case item(OutboxItem)
        /// The read-ahead is used up: read the items after `after`, leaving out the recorded ones.
        case readAhead(after: Int64, excluding: Set<Int64>)
        case needsOutbox
    }

    /// The next read-ahead item when it is `steady`, its attempt counted in memory; nil (and the read-ahead
    /// dropped) when it is `lazy`.
    private static func handOut(_ state: inout DeliveryJournal.State) -> OutboxItem? {
        guard let next = state.window.popLast(), next.mode == .steady else {
            state.window = []
            return nil
        }
        state.unrecorded = next.item.id
        state.handedOut.removeAll(keepingCapacity: true)
        state.handedOut.append(next.item.id)
        var item = next.item
        item.attempts += 1
        return item
    }

    /// Up to ``readAheadLimit`` pending items after `cursor`, in call order, read without a write.
    ///
    /// In the engine's own file the read runs on the loop's task, as its commits do (``bookkeeping(_:)``): sent
    /// to a Dispatch thread, every read-ahead cost the loop two thread switches.
    private func readAhead(after cursor: Int64, excluding recorded: Set<Int64>) async throws
        -> [DeliveryJournal.Ahead]
    {
        let engine = engine
        let read: @Sendable (GQLTransaction) throws -> [DeliveryJournal.Ahead] = { tx in
            var ahead: [DeliveryJournal.Ahead] = []
            ahead.reserveCapacity(Self.readAheadLimit)
            try tx.forEachRow(sql: Self.readAheadSQL, [.string(engine), .int(cursor)], table: Self.table) { columns in
                let row = OutboxRow(columns)
                guard let id = row.id, !recorded.contains(id) else { return }
                let item = try self.item(row, in: tx, body: true)
                ahead.append(.init(mode: columns.text(7) == "steady" ? .steady : .lazy, item: item))
            }
            return ahead
        }
        if ownsDatabase { return try readOnThisThread(read) }
        return try await database.read(read)
    }

    /// A read on the caller's thread (from an async context, `database.read` would pick its Dispatch form).
    private func readOnThisThread<T>(_ body: (GQLTransaction) throws -> T) throws -> T {
        try database.read(body)
    }

    private static let readAheadLimit = 64
    /// The item's columns in ``OutboxRow``'s order, then the mode.
    private static let readAheadSQL = """
        SELECT id, op, key, input, idempotency, nonce, attempts, mode FROM \(table)
        WHERE engine = ? AND state = 'pending' AND id > ? ORDER BY id LIMIT \(readAheadLimit)
        """
    private static let attemptSQL = "UPDATE \(table) SET attempts = attempts + 1 WHERE id = ? RETURNING id"

    private static let setAsideSQL =
        "UPDATE \(table) SET state = 'failed', error = ?, failed_at = ? WHERE id = ? RETURNING id"
    private static let claimSQL = """
        UPDATE \(table) SET attempts = attempts + 1
        WHERE id IN (SELECT id FROM \(table) WHERE engine = ?1 AND state = 'pending' ORDER BY id LIMIT ?2)
        RETURNING id, op, key, input, idempotency, nonce, attempts
        """
}
