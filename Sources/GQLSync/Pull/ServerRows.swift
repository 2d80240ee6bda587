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
    /// The same, in the table's order: an item's values are bound in it.
    let ordered: [String]

    /// What a batch of items did to the table.
    struct Tally: Sendable, Equatable {
        var written = 0
        var deleted = 0
        var kept = 0
    }

    /// The shape of `table` in `store`.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for a table of the engine's, SQLite's or the migrator's
    ///   (``isReserved(_:)``); `.unknownTable` when there is no such table; `.missingPrimaryKey` when it has no
    ///   single-column primary key to match server items by.
    init(table: String, in store: GQLDatabase) throws {
        guard !Self.isReserved(table) else {
            throw GQLError(
                .invalidArgument, "'\(table)' is a table of the sync engine or of SQLite, not one for server items",
                table: table)
        }
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
        ordered = info.compactMap { $0["name"]?.stringValue }
        columns = Set(ordered)
    }

    /// Writes `items` inside `tx`; `shielded` are the keys (``keyText(_:)``) with unsent outbox items.
    ///
    /// Each item is written as the dictionary API's `insertUpdate` would write its table's fields, through one
    /// statement per set of fields present (usually one a page), built once rather than once per item.
    ///
    /// - Throws: ``GQLError`` `.decoding` naming the item when one is not an object or lacks the key.
    func apply(_ items: [GQLValue], shielded: Set<String>, in tx: GQLTransaction, source: String) throws -> Tally {
        var tally = Tally()
        let versions = try localVersions(items, in: tx)
        // The key as text is needed only to look it up in one of these.
        let compares = !shielded.isEmpty || !versions.isEmpty
        var upserts: [UInt64: GQLTransaction.RowUpsert] = [:]
        var values: [GQLValue] = []
        values.reserveCapacity(ordered.count)
        for (index, item) in items.enumerated() {
            guard case .object(let fields) = item, let keyValue = fields[key], !keyValue.isNull,
                let keyText = compares || !Self.isPlainKey(keyValue) ? Self.keyText(keyValue) : ""
            else {
                throw GQLError(
                    .decoding, "\(source): item \(index) is not an object with a '\(key)' key", table: table)
            }
            let isDeleted = try Self.check(fields, key: key, keyValue, item: index, source: source, table: table)
            if compares {
                if shielded.contains(keyText) {
                    tally.kept += 1
                    continue
                }
                if let local = versions[keyText], let version = fields["_version"]?.intValue, local > version {
                    tally.kept += 1
                    continue
                }
            }
            if isDeleted {
                if try tx.deleteOne(table, key: keyValue) { tally.deleted += 1 }
                continue
            }
            guard ordered.count <= 64 else {
                var named: [String: any GQLValueConvertible] = [:]
                for (name, value) in fields where columns.contains(name) { named[name] = value }
                try tx.insertUpdate(table, named)
                tally.written += 1
                continue
            }
            // Which of the table's columns the item has, as bits in the table's order.
            var present: UInt64 = 0
            values.removeAll(keepingCapacity: true)
            for (position, name) in ordered.enumerated() {
                if let value = fields[name] {
                    present |= 1 << UInt64(position)
                    values.append(value)
                }
            }
            let upsert: GQLTransaction.RowUpsert
            if let made = upserts[present] {
                upsert = made
            } else {
                upsert = try tx.rowUpsert(
                    table,
                    columns: ordered.enumerated().filter { present & (1 << UInt64($0.offset)) != 0 }.map(\.element))
                upserts[present] = upsert
            }
            try tx.upsert(upsert, values)
            tally.written += 1
        }
        return tally
    }

    /// Refuses an item whose key is not a string or a number, or whose `_version` or `_deleted` is of the wrong
    /// kind: written, a `"5"` version would never be compared, and a `"true"` tombstone would be a row. Returns
    /// whether the item is a tombstone (`_deleted: true`).
    private static func check(
        _ fields: GQLValues, key: String, _ keyValue: GQLValue, item index: Int, source: String, table: String
    ) throws -> Bool {
        func refuse(_ what: String) -> GQLError {
            GQLError(.decoding, "\(source): item \(index) \(what)", table: table)
        }
        switch keyValue {
        case .string, .int: break
        case .double(let number) where number.isFinite: break
        default: throw refuse("has a '\(key)' key that is \(keyValue.kindName), not a string or a number")
        }
        if let version = fields["_version"], !version.isNull, version.intValue == nil {
            throw refuse("has a _version that is \(version.kindName), not a whole number")
        }
        switch fields["_deleted"] {
        case nil, .null?: return false
        case .bool(let deleted)?: return deleted
        case let other?: throw refuse("has a _deleted that is \(other.kindName), not a Bool")
        }
    }

    /// Whether ``keyText(_:)`` of `value` cannot fail: a string or a whole number.
    private static func isPlainKey(_ value: GQLValue) -> Bool {
        switch value {
        case .string, .int: true
        default: false
        }
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

    /// Whether `table` is the engine's (`_gqlsync_…`), SQLite's (`sqlite_…`) or the migrator's (`gql_migrations`),
    /// compared as SQLite compares names (case-blind): server items never go there.
    static func isReserved(_ table: String) -> Bool {
        let lowered = table.lowercased()
        return lowered.hasPrefix("_gqlsync_") || lowered.hasPrefix("sqlite_") || lowered == GQLMigrator.tableName
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
