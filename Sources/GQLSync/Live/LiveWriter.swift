import GQLCache
import GQLCore
import GQLNet
import GQLStore

/// Writes one subscription event into the store.
struct LiveWriter: Sendable {
    let outbox: OutboxStore
    let store: GQLDatabase
    let rows: ServerRows
    /// Hears each event once it is written (``GQLSync/Configuration/cache``).
    var cache: GQLCache? = nil

    /// Writes the item of `result` (its only data field); returns the key it touched and what it did.
    ///
    /// - Throws: ``GQLResult/Failure`` for an event with errors; ``GQLError`` `.invalidResponse` when the data
    ///   holds no item.
    func apply(_ result: GQLResult) async throws -> (field: String, tally: ServerRows.Tally) {
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        guard case .object(let fields)? = result.data, fields.count == 1, let (field, value) = fields.first else {
            throw GQLError(.invalidResponse, "a subscription event must carry one field of data", operation: "live")
        }
        guard case .object(var item) = value else {
            throw GQLError(
                .invalidResponse, "the event \(field) carries \(value.kindName), not an item", operation: field)
        }
        if field.hasPrefix("onDelete") { item["_deleted"] = true }
        let shared = store === outbox.database
        let shielded = shared ? nil : try outbox.unsentKeys(in: outbox.database)
        let (rows, outbox, event) = (rows, outbox, GQLValue.object(item))
        let tally = try await store.write(origin: GQLSync.origin) { tx in
            try rows.apply([event], shielded: try shielded ?? outbox.unsentKeys(in: tx), in: tx, source: field)
        }
        try cache?.write(objects: [event], typename: rows.table, keyField: rows.key)
        return (field, tally)
    }
}
