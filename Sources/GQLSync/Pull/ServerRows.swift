import GQLCore
import GQLStore

/// Writes the server's items into one local table: pulled pages, live events, delivered answers, conflict winners.
///
/// Only the table's columns are written (a server item's other fields are left out), so a query may select
/// fewer or more fields than the table has; a new row gets the table's defaults for the rest. An item with
/// `_deleted: true` deletes its row. An item is kept out, and counted as kept, when the local row still has
/// unsent outbox items (the local change wins until it is sent), or when the local row carries a newer
/// `_version` than the item (a live event already brought it).
struct ServerRows: Sendable {
    let table: String
    /// The table's primary key column.
    let key: String
    /// The table's columns.
    let columns: Set<String>

    /// What a batch of items did to the table.
    struct Tally: Sendable, Equatable {
        var written = 0
        var deleted = 0
        var kept = 0
    }

    /// The shape of `table` in `store`.
    ///
    /// - Throws: ``GQLError`` `.unknownTable` when there is no such table; `.missingPrimaryKey` when it has no
    ///   single-column primary key to match server items by.
    init(table: String, in store: GQLDatabase) throws {
        let info = try store.fetchAll(sql: "SELECT name, pk FROM pragma_table_info(?)", [table])
        guard !info.isEmpty else {
            throw GQLError(.unknownTable, "there is no table named '\(table)' to write server items into", table: table)
        }
        let keys = info.filter { ($0["pk"]?.intValue ?? 0) > 0 }.compactMap { $0["name"]?.stringValue }
        guard keys.count == 1, let key = keys.first else {
            throw GQLError(
                .missingPrimaryKey,
                "the table \(table) needs a single-column primary key to match server items by", table: table)
        }
        self.table = table
        self.key = key
        columns = Set(info.compactMap { $0["name"]?.stringValue })
    }

    /// Writes `items` inside `tx`; `shielded` are the keys (``keyText(_:)``) with unsent outbox items.
    ///
    /// - Throws: ``GQLError`` `.decoding` naming the item when one is not an object or lacks the key.
    func apply(_ items: [GQLValue], shielded: Set<String>, in tx: GQLTransaction, source: String) throws -> Tally {
        var tally = Tally()
        let versions = try localVersions(items, in: tx)
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item, let keyValue = fields[key], !keyValue.isNull,
                let keyText = Self.keyText(keyValue)
            else {
                throw GQLError(
                    .decoding, "\(source): item \(index) is not an object with a '\(key)' key", table: table)
            }
            if shielded.contains(keyText) {
                tally.kept += 1
                continue
            }
            if let local = versions[keyText], let version = fields["_version"]?.intValue, local > version {
                tally.kept += 1
                continue
            }
            if fields["_deleted"]?.boolValue == true {
                if try tx.deleteOne(table, key: keyValue) { tally.deleted += 1 }
                continue
            }
            var values: [String: any GQLValueConvertible] = [:]
            values.reserveCapacity(columns.count)
            for (name, value) in fields where columns.contains(name) { values[name] = value }
            try tx.insertUpdate(table, values)
            tally.written += 1
        }
        return tally
    }

    /// The `_version` of the local rows of `items`, by key text; empty when the table has no `_version`.
    private func localVersions(_ items: [GQLValue], in tx: GQLTransaction) throws -> [String: Int64] {
        guard columns.contains("_version") else { return [:] }
        let keys = items.compactMap { $0[key] }.filter { !$0.isNull }
        var versions: [String: Int64] = [:]
        let quotedTable = Self.quoted(table)
        let quotedKey = Self.quoted(key)
        var start = 0
        while start < keys.count {
            let chunk = Array(keys[start..<min(start + 500, keys.count)])
            start += chunk.count
            var arguments = GQLArguments()
            arguments.positional = chunk
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            // fetchAll keeps the statement prepared: a full chunk's text is the same on every page.
            let rows = try tx.fetchAll(
                sql: "SELECT \(quotedKey) AS k, \"_version\" AS v FROM \(quotedTable) WHERE \(quotedKey) IN (\(marks))",
                arguments)
            for row in rows {
                if let key = row["k"], let text = Self.keyText(key), let version = row["v"]?.intValue {
                    versions[text] = version
                }
            }
        }
        return versions
    }

    /// A key as a comparable word: strings as themselves, whole numbers in decimal, anything else as JSON, so
    /// the key `1001` an app queued under matches a server's `"1001"`.
    static func keyText(_ value: GQLValue) -> String? {
        switch value {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number) where number.rounded() == number && abs(number) < 1e15: return String(Int64(number))
        case .null: return nil
        default: return try? value.jsonString()
        }
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
