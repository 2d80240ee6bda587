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
    /// How long a custom strategy may take to decide (``GQLSync/Configuration/conflictTimeout``); `nil`: no limit.
    var timeout: Duration? = nil

    func resolve(_ item: OutboxItem, server: GQLValues?, failure: GQLSync.Failure) async -> Settled {
        let values: GQLValues
        do {
            values = try item.values()
        } catch {
            var failed = failure
            failed.message = "the item's values cannot be read: \(error); \(failure.message)"
            return .failed(failed)
        }
        let conflict = GQLSync.Conflict(
            id: item.id, name: item.name, key: item.key, values: values, server: server ?? [:], failure: failure)
        let decided: GQLSync.Resolution
        switch resolution {
        case .serverWins: decided = .serverWins
        case .clientWins: decided = .clientWins
        case .custom(let decide):
            switch await Self.decide(conflict, with: decide, within: timeout) {
            case .decided(.success(let resolution)):
                decided = resolution
            case .decided(.failure(let error)):
                var failed = failure
                failed.message = "the conflict strategy failed: \(error); \(failure.message)"
                return .failed(failed)
            case .timedOut(let limit):
                // Set aside like any failed item (retry, drop); its task is cancelled, and what it returns later is
                // never applied: nothing is written for it.
                var failed = failure
                failed.message = "the conflict strategy did not decide within \(limit); \(failure.message)"
                return .failed(failed)
            case .cancelled:
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
            return resend(values, conflict, "clientWins")
        case .merged(let values):
            return resend(values, conflict, "merged")
        }
    }

    /// What came of waiting for a custom strategy.
    enum Decision: Sendable {
        /// It returned or threw in time.
        case decided(Result<GQLSync.Resolution, any Error>)
        /// It had not decided when `timeout` (said in words) ran out.
        case timedOut(String)
        /// The delivery task was cancelled (``GQLSync/shutdown()``) before it decided.
        case cancelled
    }

    /// The custom strategy's decision, or what came first: `timeout` running out, or the delivery task's
    /// cancellation. The strategy runs in a task of its own, cancelled in both cases, and a closure that ignores
    /// that and never returns holds neither the queue, nor the loop's end, nor the shutdown that waits for it.
    static func decide(
        _ conflict: GQLSync.Conflict,
        with strategy: @escaping @Sendable (GQLSync.Conflict) async throws -> GQLSync.Resolution,
        within timeout: Duration? = nil
    ) async -> Decision {
        let decision = Task { try await strategy(conflict) }
        let waiter = GQLWaiter<Decision>()
        let timer = timeout.map { timeout in
            Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                if waiter.resume(returning: .timedOut(Self.words(timeout))) { decision.cancel() }
            }
        }
        Task { waiter.resume(returning: .decided(await decision.result)) }
        let outcome = await waiter.wait(whenCancelled: .cancelled)
        timer?.cancel()
        if case .cancelled = outcome { decision.cancel() }
        return outcome
    }

    /// `60 seconds`, `1 second`, `0.25 seconds`.
    static func words(_ duration: Duration) -> String {
        let value = duration.seconds
        let number = value == value.rounded() ? String(Int64(value)) : String(value)
        return value == 1 ? "1 second" : "\(number) seconds"
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
