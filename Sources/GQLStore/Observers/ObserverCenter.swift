import CSQLite
import Dispatch
import Foundation
import GQLCore
import Synchronization

/// One change reported by an observer's trigger.
struct ObserverEvent: Sendable {
    var observer: Int
    var type: GQLObserverType
    var key: GQLValue
}

/// The observers of one database: their triggers on the writer connection, and the serial queue that
/// calls them back after each commit, in commit order.
final class ObserverCenter: Sendable {
    final class Entry: Sendable {
        let id: Int
        let table: String
        let primaryKey: String
        let types: GQLObserverType
        let condition: String?
        let callback: @Sendable (GQLChange) -> Void
        let active = Atomic<Bool>(true)

        init(
            id: Int, table: String, primaryKey: String, types: GQLObserverType, condition: String?,
            callback: @escaping @Sendable (GQLChange) -> Void
        ) {
            self.id = id
            self.table = table
            self.primaryKey = primaryKey
            self.types = types
            self.condition = condition
            self.callback = callback
        }
    }

    private let entries = GQLLocked<[Int: Entry]>([:])
    private let nextID = Atomic<Int>(1)
    private let queue = DispatchQueue(label: "GraphQLite.GQLStore.observers")

    /// The tables that have observers (whose triggers a new writer connection needs).
    func tables() -> Set<String> {
        entries.withLock { Set($0.values.map(\.table)) }
    }

    /// Adds an observer and creates its triggers with `connection` (the writer's, lock held).
    func add(
        table: TableSchema, types: GQLObserverType, condition: String?, connection: Connection,
        callback: @escaping @Sendable (GQLChange) -> Void
    ) throws -> Int {
        guard !types.isEmpty else {
            throw GQLError(
                .invalidArgument, "an observer needs at least one of .insert, .update, .delete", table: table.name)
        }
        let condition = condition.flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
        if let condition {
            // Compiling a SELECT over the table aliased OBJ checks syntax and column names now.
            do {
                _ = try connection.prepare(
                    "SELECT 1 FROM main.\(table.quotedName) AS OBJ WHERE (\(condition)\n) LIMIT 0")
            } catch let error as GQLError {
                throw GQLError(
                    .invalidCondition, "the observer condition '\(condition)' is not valid: \(error.message)",
                    sql: condition, table: table.name)
            }
        }
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        let entry = Entry(
            id: id, table: table.name, primaryKey: table.primaryKey, types: types, condition: condition,
            callback: callback)
        entries.withLock { $0[id] = entry }
        do {
            try rebuildTriggers(table: table.name, connection)
        } catch let error as GQLError {
            entries.withLock { $0[id] = nil }
            try? rebuildTriggers(table: table.name, connection)
            throw GQLError(
                .invalidCondition, "cannot observe \(table.name): \(error.message)", sql: condition, table: table.name)
        }
        return id
    }

    /// Stops deliveries at once and rebuilds the table's triggers with `connection` (the writer's, lock held).
    /// - Returns: the observer's table, or `nil` for an unknown id.
    @discardableResult
    func remove(_ id: Int, connection: Connection) -> String? {
        guard let entry = entries.withLock({ $0.removeValue(forKey: id) }) else { return nil }
        entry.active.store(false, ordering: .relaxed)
        try? rebuildTriggers(table: entry.table, connection)
        return entry.table
    }

    /// Recreates the triggers of `table`, after the table was dropped and created again.
    func reinstall(table: String, connection: Connection) throws {
        try rebuildTriggers(table: table, connection)
    }

    var count: Int { entries.withLock { $0.count } }

    /// Queues the events of one commit, made by a write tagged `origin`, for delivery.
    func deliver(_ events: [ObserverEvent], origin: String?) {
        let snapshot = entries.withLock { $0 }
        queue.async {
            for event in events {
                guard let entry = snapshot[event.observer], entry.active.load(ordering: .relaxed) else { continue }
                entry.callback(GQLChange(type: event.type, key: event.key, origin: origin))
            }
        }
    }

    /// Returns once every event committed so far has been delivered.
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }

    // MARK: Triggers

    private static let kinds: [(GQLObserverType, String, String)] = [
        (.insert, "INSERT", "NEW"), (.update, "UPDATE", "NEW"), (.delete, "DELETE", "OLD"),
    ]

    /// Each table has at most one trigger per kind of change, holding one `SELECT` per observer with the
    /// observer's condition as its `WHERE`: SQLite then runs one trigger program per row, however many
    /// observers there are.
    private func rebuildTriggers(table: String, _ connection: Connection) throws {
        let observers = entries.withLock { $0.values.filter { $0.table == table } }.sorted { $0.id < $1.id }
        for (type, event, row) in Self.kinds {
            let name = "gql_observers_\(event.lowercased())_\(table)".quotedIdentifier
            try connection.execute("DROP TRIGGER IF EXISTS temp.\(name)")
            let selects = observers.filter { $0.types.contains(type) }.map { entry -> String in
                let key = "\(row).\(entry.primaryKey.quotedIdentifier)"
                let call = "SELECT \(WriteSession.observerFunction)(\(entry.id), \(type.rawValue), \(key))"
                guard let condition = entry.condition else { return call + ";" }
                return call + " WHERE (" + ConditionRewriter.rewrite(condition, row: row) + "\n);"
            }
            guard !selects.isEmpty else { continue }
            try connection.execute(
                "CREATE TEMP TRIGGER \(name) AFTER \(event) ON main.\(table.quotedIdentifier) FOR EACH ROW BEGIN "
                    + selects.joined(separator: " ") + " END")
        }
    }
}

/// The value of an SQL function argument.
func sqliteValue(_ value: OpaquePointer) -> GQLValue {
    switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: return .int(sqlite3_value_int64(value))
    case SQLITE_FLOAT: return .double(sqlite3_value_double(value))
    case SQLITE_TEXT:
        guard let text = sqlite3_value_text(value) else { return .string("") }
        let count = Int(sqlite3_value_bytes(value))
        return .string(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
    case SQLITE_BLOB:
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, let bytes = sqlite3_value_blob(value) else { return .data(Data()) }
        return .data(Data(bytes: bytes, count: count))
    default: return .null
    }
}
