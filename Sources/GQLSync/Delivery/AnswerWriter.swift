import GQLCore
import GQLNet
import GQLStore

/// Writes a delivered mutation's answer into the app's table of its type (`updateNote` → `Note`), so the local
/// row gets what the server made of the change (its `_version`, server-kept fields).
///
/// Nothing is written without the app's database (an outbox in its own file), without a local table of that
/// name, without the table's key in the answer, or when a later outbox item for the same key is waiting: that
/// newer local change wins until it is sent in turn.
struct AnswerWriter: Sendable {
    /// The app's database (the outbox's own), or `nil` when the outbox has a file of its own.
    let store: GQLDatabase?
    let outbox: OutboxStore

    func write(_ item: OutboxItem, _ result: GQLResult) async {
        guard let store, case .object(let fields)? = result.data, fields.count == 1,
            let (field, answer) = fields.first, case .object = answer,
            let table = ConflictHandler.table(forMutationField: field),
            let rows = try? ServerRows(table: table, in: store)
        else { return }
        var written = answer
        if field.hasPrefix("delete"), case .object(var members) = answer {
            members["_deleted"] = true
            written = .object(members)
        }
        let (outbox, id, event) = (outbox, item.id, written)
        // A failure here leaves the local row as it was; the item itself was delivered either way.
        _ = try? await store.write(origin: GQLSync.origin) { tx in
            let later = try outbox.unsentKeys(after: id, in: tx)
            return try rows.apply([event], shielded: later, in: tx, source: "the answer of item \(id)")
        }
    }
}
