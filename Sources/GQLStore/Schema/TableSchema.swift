import Foundation
import GQLCore
import Synchronization

/// The table behind a registered type (or found in the file): its columns, key and the SQL of each verb.
///
/// A class, so that the verbs pass one reference around instead of copying a dozen strings per call.
final class TableSchema: Sendable {
    /// The statements a schema prepares, cached per connection under (schema id, verb).
    enum Verb: Int {
        case insert, upsert, update, delete, selectByKey, checkByKey
    }

    private static let nextID = Atomic<Int>(1)

    /// Unique per schema instance, for statement caches.
    let id: Int
    /// What a column holds, which decides its declared SQL type and how values are read back.
    enum Kind: String, Sendable {
        case bool, integer, real, text, date, blob, json
        /// Unknown until a value arrives (a `nil` optional of a custom type): no type affinity.
        case any

        var declaredType: String {
            switch self {
            case .bool, .integer: "INTEGER"
            case .real: "REAL"
            case .text, .date, .json: "TEXT"
            case .blob: "BLOB"
            case .any: ""
            }
        }
    }

    struct Column: Sendable, Hashable {
        var name: String
        var kind: Kind
        var nullable: Bool
        /// The value of the type's default `init()`, used as the DEFAULT when the column is added later.
        var defaultValue: GQLValue
    }

    let name: String
    let columns: [Column]
    let columnNames: [String]
    let primaryKey: String
    let primaryKeyIndex: Int
    let columnIndex: [String: Int]

    // The SQL of each verb, built once.
    let quotedName: String
    let selectList: String
    let insertSQL: String
    let upsertSQL: String
    let updateSQL: String
    let deleteSQL: String
    let selectByKeySQL: String
    let checkByKeySQL: String

    /// Whether rows can be addressed by one key value (a single-column primary key, or the rowid of a table
    /// without a declared key); `false` for a composite key.
    let hasKey: Bool

    /// - Parameters:
    ///   - primaryKey: the key column; `nil` for a table found in a file without one, which is then
    ///     addressed by its `rowid`.
    ///   - compositeKey: the table found in the file has a key of several columns: no single key value.
    init(name: String, columns: [Column], primaryKey: String?, compositeKey: Bool = false) throws {
        self.hasKey = !compositeKey
        let keyIndex: Int
        if let primaryKey {
            guard let index = columns.firstIndex(where: { $0.name == primaryKey }) else {
                throw GQLError(
                    .missingPrimaryKey,
                    "\(name).primaryKey() is '\(primaryKey)', which is not a stored property of \(name)",
                    table: name)
            }
            keyIndex = index
        } else {
            keyIndex = -1
        }
        let primaryKey = primaryKey ?? "rowid"
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        self.name = name
        self.columns = columns
        self.columnNames = columns.map(\.name)
        self.primaryKey = primaryKey
        self.primaryKeyIndex = keyIndex
        var index: [String: Int] = [:]
        for (i, column) in columns.enumerated() { index[column.name] = i }
        self.columnIndex = index

        let q = name.quotedIdentifier
        let names = columns.map(\.name.quotedIdentifier)
        let key = primaryKey.quotedIdentifier
        let others = columns.enumerated().filter { $0.offset != keyIndex }.map { $0.element.name.quotedIdentifier }
        quotedName = q
        selectList = names.joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        insertSQL = "INSERT INTO \(q) (\(selectList)) VALUES (\(placeholders))"
        let upsertSet =
            others.isEmpty
            ? "NOTHING" : "UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        upsertSQL = insertSQL + " ON CONFLICT(\(key)) DO \(upsertSet)"
        // Every column is bound in schema order; the key appears in SET too (a no-op) so the encoder's
        // positions are the same as for INSERT, and the key is bound once more at the end for WHERE.
        updateSQL =
            "UPDATE \(q) SET " + names.map { "\($0) = ?" }.joined(separator: ", ") + " WHERE \(key) = ?"
        deleteSQL = "DELETE FROM \(q) WHERE \(key) = ?"
        selectByKeySQL = "SELECT \(selectList) FROM \(q) WHERE \(key) = ?"
        checkByKeySQL = "SELECT EXISTS(SELECT 1 FROM \(q) WHERE \(key) = ?)"
    }

    /// The SQL of a verb.
    func sql(_ verb: Verb) -> String {
        switch verb {
        case .insert: insertSQL
        case .upsert: upsertSQL
        case .update: updateSQL
        case .delete: deleteSQL
        case .selectByKey: selectByKeySQL
        case .checkByKey: checkByKeySQL
        }
    }

    /// `CREATE TABLE IF NOT EXISTS` with every column.
    var createSQL: String {
        let defs = columns.map { column -> String in
            var def = column.definition
            if column.name == primaryKey { def += " PRIMARY KEY" }
            return def
        }
        return "CREATE TABLE IF NOT EXISTS \(quotedName) (\(defs.joined(separator: ", ")))"
    }

    /// A SELECT of every column with an optional condition, order, limit and offset.
    func selectSQL(_ condition: String?, order: String?, limit: Int?, offset: Int?) -> String {
        var sql = "SELECT \(selectList) FROM \(quotedName)"
        sql.appendClauses(condition, order: order, limit: limit, offset: offset)
        return sql
    }
}

extension TableSchema.Column {
    /// The column's definition as CREATE TABLE and ALTER TABLE ADD COLUMN write it.
    var definition: String {
        var def = name.quotedIdentifier
        let type = kind.declaredType
        if !type.isEmpty { def += " " + type }
        if !nullable {
            def += " NOT NULL"
            if let literal = defaultValue.sqlLiteral { def += " DEFAULT " + literal }
        }
        return def
    }
}

extension String {
    /// The string as an SQL identifier in double quotes, inner quotes doubled.
    var quotedIdentifier: String {
        // Foundation's replacingOccurrences goes through NSString on Linux: half of a dictionary-API upsert's time
        // in a profile of GQLSync's pull. Names rarely hold a quote, so look first.
        guard utf8.contains(UInt8(ascii: "\"")) else { return "\"" + self + "\"" }
        return "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    mutating func appendClauses(_ condition: String?, order: String?, limit: Int?, offset: Int?) {
        if let condition, !condition.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            // On its own line in parentheses, so a trailing `-- comment` or an OR cannot swallow what follows.
            self += " WHERE (" + condition + "\n)"
        }
        if let order, !order.isEmpty { self += " ORDER BY " + order }
        if let limit {
            self += " LIMIT \(limit)"
        } else if offset != nil {
            self += " LIMIT -1"
        }
        if let offset { self += " OFFSET \(offset)" }
    }
}

extension GQLValue {
    /// The value as an SQL literal for a DEFAULT clause; `nil` when it has none.
    var sqlLiteral: String? {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? "\(d)" : nil
        case .string(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .data(let d): return "X'" + d.map { String(format: "%02X", $0) }.joined() + "'"
        case .array, .object:
            return (try? jsonString()).map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }
        }
    }
}
