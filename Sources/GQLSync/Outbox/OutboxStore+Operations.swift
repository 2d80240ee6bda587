import GQLCore
import GQLStore

/// The operations of the outbox's items, each stored once in `_gqlsync_operations` (outbox step 6).
///
/// An item names its operation by id (`op`). The text is still the one captured when the call was made: a
/// call whose registry text differs from every stored one adds a row, and an id once given always means the
/// same name, text and input argument (the table is `AUTOINCREMENT`, and its rows never change), so both sides
/// may keep what they read.
extension OutboxStore {
    static let operationTable = "_gqlsync_operations"

    /// An operation as stored: what an item sends.
    struct Operation: Sendable, Hashable {
        var name: String
        var query: String
        var wrap: String?
    }

    /// What this process knows of `_gqlsync_operations`: the id of each operation name's last text, for
    /// enqueue, and the operation of each id read so far, for delivery. Only committed rows go in (an id found
    /// or added inside an app's write is kept once it commits), and the item's insert checks that its operation
    /// is still there (``removeUnusedOperations(_:)`` may have removed it since), so a stale entry costs a
    /// look-up, never an item that names a missing operation.
    final class Operations: Sendable {
        private struct State {
            var idByName: [String: (operation: Operation, id: Int64)] = [:]
            var byID: [Int64: Operation] = [:]
        }

        // A pthread lock (GQLLocked), which ThreadSanitizer understands, like the engine's other locks.
        private let state = GQLLocked(State())

        init() {}

        /// The id known for `operation`, when its name's last stored text is this one.
        func id(of operation: Operation) -> Int64? {
            state.withLock { state in
                guard let known = state.idByName[operation.name], known.operation == operation else { return nil }
                return known.id
            }
        }

        func operation(_ id: Int64) -> Operation? { state.withLock { $0.byID[id] } }

        func note(_ operation: Operation, id: Int64) {
            state.withLock { state in
                state.idByName[operation.name] = (operation, id)
                state.byID[id] = operation
            }
        }

        func noteRead(_ operation: Operation, id: Int64) { state.withLock { $0.byID[id] = operation } }
    }

    /// The id of `operation` in `tx`: found in the table, or added; remembered once `tx` commits.
    func storedOperation(_ operation: Operation, in tx: GQLTransaction) throws -> Int64 {
        let found = try tx.fetchAll(
            sql: Self.findOperationSQL,
            [operation.name, operation.query, operation.wrap.map { GQLValue.string($0) } ?? .null]
        ).first?["id"]?.intValue
        let id: Int64
        if let found {
            id = found
        } else {
            id = try tx.insert(
                sql: Self.addOperationSQL,
                [.string(operation.name), .string(operation.query), operation.wrap.map { .string($0) } ?? .null],
                table: Self.operationTable)
        }
        let operations = operations
        try tx.afterCommit { operations.note(operation, id: id) }
        return id
    }

    /// The operation of the item `id` names by `op`, from what this process read before or from `context`.
    static func operation(_ op: Int64, item id: Int64, operations: Operations, in context: some GQLDatabaseContext)
        throws -> Operation
    {
        if let known = operations.operation(op) { return known }
        guard let row = try context.fetchAll(sql: readOperationSQL, [op]).first,
            let name = row["name"]?.stringValue, let query = row["query"]?.stringValue
        else {
            throw GQLError(.decoding, "outbox item \(id) names operation \(op), which is not stored", table: table)
        }
        let operation = Operation(name: name, query: query, wrap: row["wrap"]?.stringValue)
        operations.noteRead(operation, id: op)
        return operation
    }

    /// Removes the operations no item names (an app that changed its operation texts leaves the old ones).
    ///
    /// Run when an engine opens. Another engine's insert checks its operation is still there, so removing one
    /// that an engine elsewhere remembers is safe.
    static func removeUnusedOperations(_ tx: GQLTransaction) throws {
        _ = try tx.fetchAll(
            sql: "DELETE FROM \(operationTable) WHERE id NOT IN (SELECT DISTINCT op FROM \(table)) RETURNING id")
    }

    private static let findOperationSQL = """
        SELECT id FROM \(operationTable) WHERE name = ? AND query = ? AND wrap IS ? ORDER BY id LIMIT 1
        """
    private static let addOperationSQL = "INSERT INTO \(operationTable) (name, query, wrap) VALUES (?, ?, ?)"
    private static let readOperationSQL = "SELECT name, query, wrap FROM \(operationTable) WHERE id = ?"
}
