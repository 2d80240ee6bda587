import Foundation
import GQLCore
import GQLStore

/// Rows of a damaged or altered file that are not records: a key that is not text (a BLOB, a number, NULL in a
/// table made without the cache's constraints) or text that is not valid UTF-8. No read can reach them (every key
/// the cache asks for is valid UTF-8 text), and none of its writes can replace them, so the maintenance
/// operations tell them apart rather than read their keys repaired (two such keys repaired to the same text, or to
/// a record's key, counted as one, and a removal by the repaired key removed nothing or the wrong row).
extension RecordStore {
    /// The sizes of the table's rows: each record's (its key's UTF-8 bytes and its stored fields' bytes), and how
    /// many rows are not records, with their bytes.
    struct TableSizes {
        var records: [RecordKey: Int] = [:]
        var damagedRows = 0
        var damagedBytes = 0
    }

    /// Reads ``TableSizes`` from the table.
    static func sizes(_ tx: GQLTransaction) throws -> TableSizes {
        var sizes = TableSizes()
        try tx.forEachRow(
            sql: """
                SELECT key, IFNULL(length(CAST(key AS BLOB)), 0) + IFNULL(length(CAST(fields AS BLOB)), 0)
                FROM \(table)
                """, [], table: table
        ) { row in
            let size = Int(row.integer(1) ?? 0)
            if let key = row.recordKey(0) {
                sizes.records[key] = size
            } else {
                sizes.damagedRows += 1
                sizes.damagedBytes += size
            }
        }
        return sizes
    }

    /// Removes every row that is not a record; returns how many there were.
    static func removeDamaged(_ tx: GQLTransaction) throws -> Int {
        // Text keys that are not UTF-8, by their bytes (bound as a BLOB, read as text with the same bytes).
        var invalid: [Data] = []
        try tx.forEachRow(sql: "SELECT key FROM \(table) WHERE typeof(key) = 'text'", [], table: table) { row in
            guard row.recordKey(0) == nil, let bytes = row.withText(0, { Data($0) }) else { return }
            invalid.append(bytes)
        }
        var removed = try tx.change(sql: "DELETE FROM \(table) WHERE typeof(key) != 'text'", [], table: table)
        for bytes in invalid {
            removed += try tx.change(
                sql: "DELETE FROM \(table) WHERE key = CAST(? AS TEXT)", [.data(bytes)], table: table)
        }
        return removed
    }
}

extension GQLColumns {
    /// The column as a record's key: text that is valid UTF-8; `nil` for anything else (text that is not UTF-8
    /// included, never repaired).
    func recordKey(_ index: Int32) -> RecordKey? {
        (withText(index) { bytes in String(validating: bytes, as: UTF8.self) } ?? nil).map { RecordKey($0) }
    }
}
