import Foundation
import GQLCore
import GQLStore

/// The rows of one model in SQLite: reads with bound SQL, and the AppSync mutations (versioned, soft-deleted,
/// conflict-checked) each in one write transaction.
struct ModelStore: Sendable {
    let model: ModelDefinition
    let codec: ModelCodec
    let database: GQLDatabase
    private let selectSQL: String
    private let byKeySQL: String
    /// The insert of a create; `ON CONFLICT(key) DO NOTHING` when the key column is the table's primary key
    /// (as in every table this server makes), a plain insert after a read of the key when an older table's is not.
    private var insertSQL: String
    private var keyIsPrimary = true

    /// One page of a `list` or `sync` query.
    struct Page: Sendable {
        var items: [GQLValues]
        var nextToken: String?
    }

    static let defaultLimit = 100
    static let maximumLimit = 1000

    /// The most terms a filter or condition may hold (``GQLDevServer/Limits/maxFilterTerms``).
    let maxFilterTerms: Int
    /// The time mutations stamp.
    let clock: @Sendable () -> Date
    /// The engine's mutations that are committed off their caller's thread, in groups.
    let writes: WriteQueue
    /// Where the mutations' answers go to subscriptions, in commit order.
    let events: MutationEvents

    init(
        model: ModelDefinition, database: GQLDatabase, maxFilterTerms: Int = 1_000,
        clock: @escaping @Sendable () -> Date = Date.init, writes: WriteQueue? = nil,
        events: MutationEvents = MutationEvents()
    ) {
        self.model = model
        self.events = events
        self.writes = writes ?? WriteQueue(database: database)
        self.maxFilterTerms = maxFilterTerms
        self.clock = clock
        self.codec = ModelCodec(model: model)
        self.database = database
        self.selectSQL = "SELECT \(model.selectList) FROM \(model.table)"
        self.byKeySQL = selectSQL + " WHERE \(model.key.sqlIdentifier) = ?"
        self.insertSQL = model.insertSQL(keyIsPrimary: true)
    }

    /// Creates the table and its sync index when they do not exist.
    ///
    /// A table made by an earlier schema gains the columns of new fields (`ALTER TABLE ADD COLUMN`); nothing
    /// is dropped or retyped. A table whose primary key is not the model's key (made by a schema with another
    /// key) still works: its creates read the key before they insert.
    /// - Throws: ``GQLError`` when an existing table lacks the key column, or SQLite refuses the DDL.
    mutating func createTable() throws {
        try database.execute(model.createSQL)
        let columns = try database.fetchAll(sql: "SELECT name, pk FROM pragma_table_info(?)", [model.name])
        let existing = Set(columns.compactMap { $0["name"]?.stringValue })
        let primary = columns.filter { ($0["pk"]?.intValue ?? 0) > 0 }.compactMap { $0["name"]?.stringValue }
        keyIsPrimary = primary == [model.key]
        insertSQL = model.insertSQL(keyIsPrimary: keyIsPrimary)
        for field in model.fields where !existing.contains(field.name) {
            guard field.name != model.key else {
                throw GQLError(
                    .invalidArgument,
                    "the existing table \(model.name) has no column \(model.key), the key of type \(model.name) "
                        + "(line \(model.line)); use another database file or drop the table",
                    table: model.name, column: model.key)
            }
            var definition = field.columnDefinition
            switch field.name {
            case "_version": definition += " NOT NULL DEFAULT 1"
            case "_deleted": definition += " NOT NULL DEFAULT 0"
            case "_lastChangedAt": definition += " NOT NULL DEFAULT 0"
            default: break
            }
            try database.execute("ALTER TABLE \(model.table) ADD COLUMN \(definition)")
        }
    }

    // MARK: Reads

    /// The `filter` or `condition` argument, within ``maxFilterTerms``; `nil` for none.
    func filter(_ value: GQLValue?) throws -> ModelFilter? {
        try ModelFilter.parse(value, codec: codec, maxTerms: maxFilterTerms)
    }

    /// The item with `key`, deleted or not.
    func get(_ key: GQLValue) throws -> GQLValues? {
        try row(database, key).map(codec.item)
    }

    /// Hands `body` each row with `key` (one, where the key is the table's primary key), deleted or not, its columns
    /// in ``ModelDefinition/fields`` order, read on a reader connection as ``get(_:)`` reads it but with no row or
    /// item dictionary: a compiled plan writes a `getT` answer straight from the columns.
    func withRows(_ key: GQLValue, _ body: (GQLColumns) throws -> Void) throws {
        try database.forEachRow(sql: byKeySQL, [key], table: nil, body)
    }

    private func row(_ context: some GQLDatabaseContext, _ key: GQLValue) throws -> GQLValues? {
        var arguments = GQLArguments()
        arguments.positional = [key]
        return try context.fetchAll(sql: byKeySQL, arguments).first
    }

    /// A page of items in key order.
    ///
    /// - Parameters:
    ///   - includeDeleted: `sync` returns soft-deleted items, `list` does not.
    ///   - since: `sync`'s `lastSync`: only items changed at or after this many ms since 1970.
    func page(
        filter: ModelFilter?, limit: Int?, nextToken: String?, includeDeleted: Bool, since: Int64?
    ) throws -> Page {
        let limit = limit ?? Self.defaultLimit
        guard limit > 0 else {
            throw ResolverError.badRequest("limit must be at least 1, got \(limit)")
        }
        let size = min(limit, Self.maximumLimit)
        var clauses: [String] = []
        var arguments: [GQLValue] = []
        if !includeDeleted { clauses.append("coalesce(\"_deleted\", 0) = 0") }
        if let since {
            clauses.append("\"_lastChangedAt\" >= ?")
            arguments.append(.int(since))
        }
        if let filter { clauses.append(filter.sql(&arguments)) }
        if let nextToken {
            let token = try PageToken.decode(nextToken, model: model.name)
            clauses.append("\(model.key.sqlIdentifier) > ?")
            arguments.append(token.after)
        }
        var sql = selectSQL
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        sql += " ORDER BY \(model.key.sqlIdentifier) LIMIT \(size + 1)"
        var bound = GQLArguments()
        bound.positional = arguments
        var rows = try database.fetchAll(sql: sql, bound)
        var token: String?
        if rows.count > size {
            rows.removeLast(rows.count - size)
            if let last = rows.last?[model.key] { token = PageToken(model: model.name, after: last).encoded }
        }
        return Page(items: rows.map(codec.item), nextToken: token)
    }

    // MARK: Mutations

    /// A mutation ready to commit: the transaction that checks and writes it, returning the item as answered.
    /// Built before any write, so the same checks and values go through the async `write` (off the caller's
    /// thread) and the synchronous one.
    typealias Mutation = @Sendable (GQLTransaction) throws -> GQLValues

    /// The transaction of `verb` for `input` and `condition`: `createT` makes a new item at `_version` 1 (a
    /// missing ID key gets a UUID); `updateT` sets the given fields (absent = unchanged, null = cleared),
    /// `_version` + 1; `deleteT` soft-deletes (`_deleted` set, `_version` + 1; the row stays for `sync`).
    func mutation(_ verb: ModelResolvers.Verb, _ input: GQLValues, condition: ModelFilter?) throws -> Mutation {
        switch verb {
        case .create: try creation(input, condition: condition)
        case .update: try updating(input, condition: condition)
        case .delete: try deletion(input, condition: condition)
        }
    }

    /// Commits `mutation` off the caller's thread, through the engine's ``WriteQueue``; the item as answered.
    func commit(_ mutation: @escaping Mutation) async throws -> GQLValues {
        try await writes.commit(mutation)
    }

    /// Commits `mutation` on the caller's thread (the dev server's event loop answering a plan) when the
    /// engine's ``WriteQueue`` is idle and no other thread is writing; `nil`, with nothing written, otherwise
    /// (under concurrent writes the loops queue them, to be committed in groups, rather than take turns).
    func commitNow(_ mutation: Mutation) throws -> GQLValues? {
        guard writes.isQuiet else { return nil }
        return try database.writeIfFree(origin: MutationEvents.origin, mutation)
    }

    private func creation(_ input: GQLValues, condition: ModelFilter?) throws -> Mutation {
        let key: GQLValue
        if let given = input[model.key], !given.isNull {
            key = try codec.key(given)
        } else if model.keyField.scalar == .id || model.keyField.scalar == .string {
            key = .string(UUID().uuidString.lowercased())
        } else {
            throw ResolverError.badRequest("create\(model.name) needs \(model.key), the key of \(model.name)")
        }
        let now = clock()
        let stamp = GQLValue.string(GQLDate.string(from: now))
        var values: GQLValues = [model.key: key]
        for field in model.fields where field.name != model.key && !field.isServerKept {
            values[field.name] = try codec.column(input[field.name] ?? .null, field)
        }
        for name in ["createdAt", "updatedAt"] {
            values[name] = try serverStamp(input[name], name, default: stamp)
        }
        values["_version"] = 1
        values["_deleted"] = false
        values["_lastChangedAt"] = .int(ModelCodec.milliseconds(now))
        let table = model.name
        let keyName = model.key
        let row = model.fields.map { values[$0.name] ?? .null }
        let item = codec.item(values)
        let insertSQL = insertSQL
        let keyIsPrimary = keyIsPrimary
        let events = events
        return { tx in
            if let condition, !condition.matches([:]) {
                if try self.row(tx, key) != nil { throw Self.exists(table, keyName, key) }
                throw ResolverError.conditionFailed("the condition of create\(table) does not hold")
            }
            if keyIsPrimary {
                // One statement: a taken key changes nothing (so the check needs no read of its own).
                guard try tx.change(sql: insertSQL, row, table: table) > 0 else {
                    throw Self.exists(table, keyName, key)
                }
            } else {
                if try self.row(tx, key) != nil { throw Self.exists(table, keyName, key) }
                _ = try tx.change(sql: insertSQL, row, table: table)
            }
            try events.record(tx, table: table, event: .create, item: item)
            return item
        }
    }

    private static func exists(_ table: String, _ keyName: String, _ key: GQLValue) -> ResolverError {
        .conditionFailed("a \(table) with \(keyName) \(key) already exists")
    }

    private func updating(_ input: GQLValues, condition: ModelFilter?) throws -> Mutation {
        let key = try codec.key(input[model.key])
        var changes: GQLValues = [:]
        for field in model.fields where field.name != model.key && !field.isServerKept {
            if let value = input[field.name] { changes[field.name] = try codec.column(value, field) }
        }
        if let createdAt = input["createdAt"], !createdAt.isNull, model.field("createdAt")?.line ?? 0 > 0 {
            changes["createdAt"] = try serverStamp(createdAt, "createdAt", default: .null)
        }
        let updatedAt = input["updatedAt"]
        let given = changes
        return change(key, input: input, condition: condition, verb: "update") { _, stamp in
            var changes = given
            changes["updatedAt"] = try serverStamp(updatedAt, "updatedAt", default: stamp)
            return changes
        }
    }

    private func deletion(_ input: GQLValues, condition: ModelFilter?) throws -> Mutation {
        let key = try codec.key(input[model.key])
        return change(key, input: input, condition: condition, verb: "delete") { _, stamp in
            ["_deleted": true, "updatedAt": stamp]
        }
    }

    /// The transaction that reads the current item, checks deletion, `_version` and `condition`, and writes
    /// `changes` with a new version and `_lastChangedAt`.
    private func change(
        _ key: GQLValue, input: GQLValues, condition: ModelFilter?, verb: String,
        _ changes: @escaping @Sendable (GQLValues, GQLValue) throws -> GQLValues
    ) -> Mutation {
        let expected = input["_version"].flatMap { $0.isNull ? nil : $0.intValue }
        let table = model.name
        let keyName = model.key
        let codec = codec
        let clock = clock
        let events = events
        return { tx in
            guard let row = try row(tx, key) else {
                throw ResolverError.conditionFailed("there is no \(table) with \(keyName) \(key) to \(verb)")
            }
            let current = codec.item(row)
            if current["_deleted"]?.boolValue == true { throw ResolverError.conflict(current: current) }
            if let expected, expected != current["_version"]?.intValue {
                throw ResolverError.conflict(current: current)
            }
            if let condition, !condition.matches(current) {
                throw ResolverError.conditionFailed("the condition of \(verb)\(table) does not hold")
            }
            let now = clock()
            var values = try changes(current, .string(GQLDate.string(from: now)))
            values["_version"] = .int((current["_version"]?.intValue ?? 0) + 1)
            values["_lastChangedAt"] = .int(ModelCodec.milliseconds(now))
            try tx.updateOne(table, values.mapValues { $0 as any GQLValueConvertible }, key: key)
            let answer = codec.item(row.merging(values) { _, new in new })
            try events.record(tx, table: table, event: verb == "delete" ? .delete : .update, item: answer)
            return answer
        }
    }

    /// `createdAt`/`updatedAt`: the input's value when the model declares the field and one is given.
    private func serverStamp(_ given: GQLValue?, _ name: String, default stamp: GQLValue) throws -> GQLValue {
        guard let field = model.field(name), field.line > 0, let given, !given.isNull else { return stamp }
        return try codec.column(given, field)
    }
}
