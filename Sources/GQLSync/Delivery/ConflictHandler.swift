import GQLCore
import GQLNet
import GQLStore

/// Applies an engine's ``GQLSync/ConflictResolution`` to an item the server refused as stale.
struct ConflictHandler: Sendable {
    /// What became of the item.
    enum Settled: Sendable, Equatable {
        /// The local change is dropped (`resolution` names why).
        case dropped(String)
        /// The item is sent again with these values.
        case resend(GQLValues, String)
        /// The strategy failed; the item is set aside.
        case failed(GQLSync.Failure)
        /// The engine stopped before a custom strategy decided: the item stays queued as it is.
        case unresolved
    }

    let resolution: GQLSync.ConflictResolution
    /// The app's database, where a winning server item is written; `nil` when the outbox has its own file.
    let store: GQLDatabase?
    /// The outbox, whose items queued after a conflict's keep the server's item out of the store.
    let outbox: OutboxStore

    func resolve(_ item: OutboxItem, server: GQLValues?, failure: GQLSync.Failure) async -> Settled {
        let conflict = GQLSync.Conflict(
            id: item.id, name: item.name, key: item.key, values: item.values, server: server ?? [:],
            failure: failure)
        let decided: GQLSync.Resolution
        switch resolution {
        case .serverWins: decided = .serverWins
        case .clientWins: decided = .clientWins
        case .custom(let decide):
            switch await Self.decide(conflict, with: decide) {
            case .success(let resolution)?:
                decided = resolution
            case .failure(let error)?:
                var failed = failure
                failed.message = "the conflict strategy failed: \(error); \(failure.message)"
                return .failed(failed)
            case nil:
                // The engine stops before the strategy decided: the item stays queued as it was, untouched (no
                // write while the engine shuts down), and the next engine on the outbox meets the conflict again.
                return .unresolved
            }
        }
        switch decided {
        case .serverWins:
            do {
                try writeServerItem(conflict)
            } catch {
                var failed = failure
                failed.message = "the server's item could not be written locally: \(error)"
                return .failed(failed)
            }
            return .dropped("serverWins")
        case .clientWins:
            return resend(item.values, conflict, "clientWins")
        case .merged(let values):
            return resend(values, conflict, "merged")
        }
    }

    /// The custom strategy's decision, or nil once the delivery task is cancelled (``GQLSync/shutdown()``) before
    /// it came: the strategy runs in a task of its own, cancelled with the loop, and a closure that ignores that
    /// and never returns holds neither the loop's end nor the shutdown that waits for it.
    static func decide(
        _ conflict: GQLSync.Conflict,
        with strategy: @escaping @Sendable (GQLSync.Conflict) async throws -> GQLSync.Resolution
    ) async -> Result<GQLSync.Resolution, any Error>? {
        let decision = Task { try await strategy(conflict) }
        let waiter = GQLLocked(Waiter())
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard waiter.withLock({ $0.wait(continuation) }) else {
                    continuation.resume(returning: nil)
                    return
                }
                Task {
                    let result = await decision.result
                    waiter.withLock { $0.finish() }?.resume(returning: result)
                }
            }
        } onCancel: {
            decision.cancel()
            waiter.withLock { $0.finish() }?.resume(returning: nil)
        }
    }

    /// Who resumes ``decide(_:with:)``'s wait: the strategy's answer or the cancellation, whichever comes first.
    private struct Waiter: Sendable {
        private var continuation: CheckedContinuation<Result<GQLSync.Resolution, any Error>?, Never>?
        private var finished = false

        /// Keeps `continuation` to be resumed later; false when the wait is over already (cancelled before it began).
        mutating func wait(_ continuation: CheckedContinuation<Result<GQLSync.Resolution, any Error>?, Never>) -> Bool {
            guard !finished else { return false }
            self.continuation = continuation
            return true
        }

        /// Ends the wait: the continuation to resume, the first time only.
        mutating func finish() -> CheckedContinuation<Result<GQLSync.Resolution, any Error>?, Never>? {
            defer {
                finished = true
                continuation = nil
            }
            return finished ? nil : continuation
        }
    }

    private func resend(_ values: GQLValues, _ conflict: GQLSync.Conflict, _ name: String) -> Settled {
        guard let version = conflict.server["_version"], !version.isNull else {
            var failed = conflict.failure
            failed.message =
                "a \(name) resolution needs the server's _version, and the conflict carried none; "
                + conflict.failure.message
            return .failed(failed)
        }
        var values = values
        if name != "merged" || values["_version"] == nil { values["_version"] = version }
        return .resend(values, name)
    }

    /// Writes the server's item into the local table of the mutation's type (`updateUser` → `User`), with the
    /// sync origin, as a pulled item is written (``ServerRows``): only the table's columns; refused when its key,
    /// `_version` or `_deleted` is of the wrong kind; a tombstone deletes the row; kept out when the local row has a
    /// newer `_version`, or an item queued after this one for the same key (that newer local change wins until it
    /// is sent). Nothing is written without a store, a server item or such a table.
    private func writeServerItem(_ conflict: GQLSync.Conflict) throws {
        guard let store, !conflict.server.isEmpty,
            let field = conflict.failure.errors.lazy.compactMap({ $0.path.first?.description }).first,
            let table = Self.table(forMutationField: field)
        else { return }
        let rows: ServerRows
        do {
            rows = try ServerRows(table: table, in: store)
        } catch let error as GQLError where error.code == .unknownTable {
            return
        }
        let (outbox, id, item) = (outbox, conflict.id, GQLValue.object(conflict.server))
        _ = try store.write(origin: GQLSync.origin) { tx in
            let later = try outbox.unsentKeys(after: id, in: tx)
            return try rows.apply([item], shielded: later, in: tx, source: "the server's item of conflict \(id)")
        }
    }

    /// `createUser`, `updateUser`, `deleteUser` → `User` (AppSync's names for a model's mutations); nil for any
    /// other field, and for the tables of the engine and of SQLite.
    ///
    /// The field is the server's word: an answer to `updateNote` that names `delete_gqlsync_outbox` instead must not
    /// delete an outbox item (or change its values, or another engine's), nor write SQLite's or the migrator's tables.
    static func table(forMutationField field: String) -> String? {
        for verb in ["create", "update", "delete"] where field.hasPrefix(verb) && field.count > verb.count {
            let table = String(field.dropFirst(verb.count))
            return ServerRows.isReserved(table) ? nil : table
        }
        return nil
    }
}
