import GQLCore
import GQLStore

/// The room left above the outbox's largest id, checked when an engine opens.
extension OutboxStore {
    /// The fewest ids that must be left above the largest in the table (2^32: more items than any outbox queues).
    static let idRoom: Int64 = 1 << 32

    /// Refuses an outbox whose largest id is within ``idRoom`` of SQLite's largest rowid (`Int64.max`).
    ///
    /// A new item's id is one more than the largest in the table (outbox step 7), so ids follow call order, and
    /// claims read in id order. Once the largest id is `Int64.max`, SQLite picks new ids at random instead, and
    /// items would be sent out of call order. No engine makes such ids (they start at 1 and grow by one); a file
    /// edited by hand, or damaged, can hold one, and is refused at open with the id and the table, before any item
    /// is queued behind it, rather than reordered later.
    func checkIDRoom() throws {
        let row = try database.fetchAll(sql: "SELECT max(id) AS largest FROM \(Self.table)").first
        guard let largest = row?["largest"]?.intValue, largest > Int64.max - Self.idRoom else { return }
        throw GQLError(
            .decoding,
            "\(Self.table) holds id \(largest), within 2^32 of SQLite's largest id (\(Int64.max)): items queued "
                + "after it would get ids out of call order. Engines never make such ids (the file was edited by "
                + "hand, or is damaged); deliver or drop its items with an earlier copy, or start a new outbox",
            table: Self.table)
    }
}
