import GQLCore

extension GQLDatabase {
    /// Registers a type: creates its table if missing and adds columns for new properties.
    ///
    /// Types register themselves on first use; registering up front moves that work to a moment of your
    /// choosing and makes the name known to ``createTable(_:)``, ``dropTable(_:)`` and
    /// ``cleanupDatabase()``.
    /// ```swift
    /// try db.register(User.self)
    /// ```
    public func register<T: GQLObject>(_ type: T.Type) throws {
        _ = try schema(T.self)
    }

    /// Creates the table of a registered type (no-op when it exists).
    ///
    /// - Throws: ``GQLError`` `.unknownTable` for a name no registered type has.
    public func createTable(_ name: String) throws {
        let schema = try registeredSchema(name)
        try writer.write(transaction: true) { connection in
            try install(schema, connection)
        }
        registry.commit([(nil, schema)])
    }

    /// Drops the table of a registered type. Its observers stay and resume when the table is created again.
    ///
    /// - Throws: ``GQLError`` `.unknownTable` for a name no registered type has.
    public func dropTable(_ name: String) throws {
        let schema = try registeredSchema(name)
        try writer.write(transaction: true) { connection -> Void in
            try connection.execute("DROP TABLE IF EXISTS main.\(schema.quotedName)")
        }
        registry.dropped(name)
    }

    /// Drops and recreates the table of every registered type, in one transaction: all their rows are gone,
    /// observers stay.
    public func cleanupDatabase() throws {
        let schemas = registry.registeredNames.compactMap { registry.registered(named: $0) }
        try writer.write(transaction: true) { connection in
            for schema in schemas {
                try connection.execute("DROP TABLE IF EXISTS main.\(schema.quotedName)")
                try install(schema, connection)
            }
        }
        registry.commit(schemas.map { (nil, $0) })
    }

    /// The names of every table in the file (not SQLite's own), sorted.
    public func tableNames() throws -> [String] {
        try withReader { connection in
            try connection.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                GQLArguments()
            ).compactMap { $0["name"]?.stringValue }
        }
    }

    private func registeredSchema(_ name: String) throws -> TableSchema {
        guard let schema = registry.registered(named: name) else {
            throw GQLError(
                .unknownTable, "no registered type has the table '\(name)'; register it with db.register(T.self)",
                table: name)
        }
        return schema
    }

    /// Creates the table if missing, adds missing columns, and restores observer triggers on a new table.
    func install(_ schema: TableSchema, _ connection: Connection) throws {
        let existing = try Self.columns(of: schema.name, connection)
        if existing.isEmpty {
            try connection.execute(schema.createSQL)
            try observers.reinstall(table: schema.name, connection: connection)
            return
        }
        let present = Set(existing.map(\.name))
        for column in schema.columns where !present.contains(column.name) {
            try connection.execute("ALTER TABLE main.\(schema.quotedName) ADD COLUMN \(column.definition)")
        }
    }

    /// The columns of a table as the file has them; empty when there is no such table.
    static func columns(of table: String, _ connection: Connection) throws -> [(
        name: String, type: String, notNull: Bool, pk: Int
    )] {
        try connection.rows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?, 'main')", [table]).map {
            (
                $0["name"]?.stringValue ?? "", $0["type"]?.stringValue ?? "",
                ($0["notnull"]?.intValue ?? 0) != 0, Int($0["pk"]?.intValue ?? 0)
            )
        }
    }

    /// Whether `install` would change anything.
    func needsInstall(_ schema: TableSchema, _ connection: Connection) throws -> Bool {
        let present = Set(try Self.columns(of: schema.name, connection).map(\.name))
        return present.isEmpty || schema.columns.contains { !present.contains($0.name) }
    }
}

extension GQLDatabaseContext {
    /// The schema of `T`, creating or extending its table on first use.
    func schema<T: GQLObject>(_ type: T.Type) throws -> TableSchema {
        let id = ObjectIdentifier(T.self)
        let tx = transaction
        if let tx {
            // A loop of inserts asks for the same type again and again: check the last one before hashing.
            if tx.lastSchemaType == id, let schema = tx.lastSchema { return schema }
            if let schema = tx.schemaCache[id] {
                tx.lastSchemaType = id
                tx.lastSchema = schema
                return schema
            }
        }
        let registry = database.registry
        if let schema = registry.installed(T.self) {
            tx?.schemaCache[id] = schema
            return schema
        }
        if let tx, let schema = tx.pendingSchemas.first(where: { $0.0 == id })?.1 { return schema }
        let schema = try registry.known(T.self) ?? SchemaEncoder.schema(of: T.self)
        try ensureInstalled(schema, type: id)
        return schema
    }

    /// The schema of a table by name: a registered type's, or the one found in the file.
    func tableSchema(named name: String) throws -> TableSchema {
        let registry = database.registry
        if let schema = registry.registered(named: name) {
            if !registry.isInstalled(name) { try ensureInstalled(schema, type: nil) }
            return schema
        }
        if let schema = registry.introspected(named: name) { return schema }
        let columns = try withReadConnection { try GQLDatabase.columns(of: name, $0) }
        guard !columns.isEmpty else {
            throw GQLError(.unknownTable, "there is no table named '\(name)'", table: name)
        }
        let keys = columns.filter { $0.pk > 0 }
        let schema = try TableSchema(
            name: name,
            columns: columns.map {
                TableSchema.Column(
                    name: $0.name, kind: .init(declaredType: $0.type), nullable: !$0.notNull, defaultValue: .null)
            },
            primaryKey: keys.count == 1 ? keys[0].name : nil, compositeKey: keys.count > 1)
        if transaction == nil { registry.rememberIntrospected(schema) }
        return schema
    }

    private func ensureInstalled(_ schema: TableSchema, type: ObjectIdentifier?) throws {
        let db = database
        if let tx = transaction {
            let connection = try tx.checkedConnection(write: false)
            if try db.needsInstall(schema, connection) {
                guard tx.isWritable else {
                    throw GQLError(
                        .unknownTable,
                        "the table '\(schema.name)' must be created or extended first; it cannot be inside db.read { }",
                        table: schema.name)
                }
                try db.install(schema, connection)
            }
            tx.pendingSchemas.append((type, schema))
        } else {
            try db.writer.write(transaction: true) { connection -> Void in try db.install(schema, connection) }
            db.registry.commit([(type, schema)])
        }
    }
}

extension TableSchema.Kind {
    /// The kind a column declared with `type` holds, by SQLite's affinity rules.
    init(declaredType type: String) {
        let t = type.uppercased()
        if t.contains("INT") {
            self = .integer
        } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
            self = .text
        } else if t.contains("BLOB") || t.isEmpty {
            self = t.isEmpty ? .any : .blob
        } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
            self = .real
        } else if t.contains("BOOL") {
            self = .bool
        } else {
            self = .any
        }
    }
}
