import Foundation
import GQLCore
import GQLStore

/// The outbox's claims, for whoever sends its items (the delivery loop): claim the next items in call order, and
/// remove or set aside the ones settled since the last claim. The journal's fast step and read-ahead stay inside.
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
        let recorded = journal?.beginCommit()
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
                    items.append(try self.item(OutboxRow($0), in: tx))
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
            try journal.endCommit(deleted: recorded.ids.count, claimed: items.map(\.id))
        }
        return items
    }

    /// Removes and sets aside what was settled since the last claim, claiming nothing (the loop ends), so that a
    /// delivered item is not sent again by the next engine on this outbox; writes nothing when there is nothing.
    func settle(remove: [Int64], setAside: [(Int64, GQLSync.Failure)]) async throws {
        guard !remove.isEmpty || !setAside.isEmpty || journal?.isEmpty == false else { return }
        _ = try await advance(remove: remove, setAside: setAside, claim: 0)
    }

    /// The usual step of a one-per-request drain without a commit: the delivered item is appended to the
    /// journal, and the next item comes from the read-ahead when it is `steady` (no call can merge into it, so
    /// counting its attempt in the outbox first is not needed; the attempt is counted in memory, and in the
    /// outbox should it not be delivered). Nil when the step needs the outbox: an item set aside or kept for a
    /// retry, batches, a lazy item next, a retried item put back, nothing read ahead, a full journal, or the end.
    private func fastAdvance(
        _ journal: OutboxJournal, remove: [Int64], setAside: [(Int64, GQLSync.Failure)], claim limit: Int
    ) async throws -> [OutboxItem]? {
        guard limit == 1, setAside.isEmpty, remove.count <= 1 else { return nil }
        switch try journal.step(delivered: remove) {
        case .needsOutbox:
            return nil
        case .item(let item):
            return [item]
        case .readAhead(let cursor, let recorded):
            let ahead = try await readAhead(after: cursor, excluding: recorded)
            return journal.handOut(readAhead: ahead).map { [$0] }
        }
    }

    /// Up to ``readAheadLimit`` pending items after `cursor`, in call order, read without a write.
    ///
    /// In the engine's own file the read runs on the loop's task, as its commits do (``bookkeeping(_:)``): sent
    /// to a Dispatch thread, every read-ahead cost the loop two thread switches.
    private func readAhead(after cursor: Int64, excluding recorded: Set<Int64>) async throws
        -> [OutboxJournal.Ahead]
    {
        let engine = engine
        let read: @Sendable (GQLTransaction) throws -> [OutboxJournal.Ahead] = { tx in
            var ahead: [OutboxJournal.Ahead] = []
            ahead.reserveCapacity(Self.readAheadLimit)
            try tx.forEachRow(sql: Self.readAheadSQL, [.string(engine), .int(cursor)], table: Self.table) { columns in
                let row = OutboxRow(columns)
                guard let id = row.id, !recorded.contains(id) else { return }
                let item = try self.item(row, in: tx)
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
