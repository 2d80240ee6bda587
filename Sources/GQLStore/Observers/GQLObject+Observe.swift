import GQLCore

extension GQLObject {
    /// Calls `callback` after each committed insert, update or delete of a row that matches `condition`.
    ///
    /// The condition is SQL over the row, with `OBJ.` naming its columns (the new values for inserts and
    /// updates, the old ones for deletes). Callbacks run on one serial queue, in commit order, after the
    /// write that caused them has committed — never for a rolled-back write — so a callback may write again.
    /// ```swift
    /// let id = try User.createObserver(db, [.insert, .update, .delete], "OBJ.age > 40") { type, key in
    ///     print(type, key)            // .insert 1001
    /// }
    /// User.removeObserver(db, id)
    /// ```
    /// - Returns: the observer's id, for ``removeObserver(_:_:)``.
    /// - Throws: ``GQLError`` `.invalidCondition` with SQLite's message for a condition it cannot compile.
    public static func createObserver(
        _ db: GQLDatabase, _ types: GQLObserverType, _ condition: String? = nil,
        _ callback: @escaping @Sendable (GQLObserverType, GQLValue) -> Void
    ) throws -> String {
        try createObserver(db, types, condition) { (change: GQLChange) in callback(change.type, change.key) }
    }

    /// Calls `callback` with each committed change to a row that matches `condition`, including the tag of
    /// the write that made it (``GQLChange/origin``).
    ///
    /// The same observer as ``createObserver(_:_:_:_:)-(_,_,_,(GQLObserverType,GQLValue)->Void)``, for callers
    /// that need the origin.
    /// ```swift
    /// let id = try User.createObserver(db, .all) { change in
    ///     if change.origin != "sync" { outbox.enqueue(change.key) }
    /// }
    /// ```
    public static func createObserver(
        _ db: GQLDatabase, _ types: GQLObserverType, _ condition: String? = nil,
        _ callback: @escaping @Sendable (GQLChange) -> Void
    ) throws -> String {
        try db.addObserver(try db.schema(Self.self), types, condition, callback)
    }

    /// Stops an observer. No callback starts after this returns; unknown ids are ignored.
    public static func removeObserver(_ db: GQLDatabase, _ id: String) {
        db.removeObserver(id)
    }

    /// The changes to rows that match `condition`, as an asynchronous sequence.
    ///
    /// The observer exists from this call until the iteration ends or the sequence is dropped.
    /// ```swift
    /// for try await change in User.observe(db, [.insert], "OBJ.age > 40") {
    ///     print(change.type, change.key)
    /// }
    /// ```
    public static func observe(_ db: GQLDatabase, _ types: GQLObserverType = .all, _ condition: String? = nil)
        -> GQLObservation
    {
        GQLObservation(db) { callback in try createObserver(db, types, condition, callback) }
    }
}

extension GQLDatabase {
    /// Calls `callback` after each committed change to a row of `table` that matches `condition` — the
    /// dictionary-API form of ``GQLObject/createObserver(_:_:_:_:)``, for any table with a primary key.
    ///
    /// ```swift
    /// let id = try db.createObserver("User", [.insert, .update], "OBJ.age > 40") { type, key in print(type, key) }
    /// ```
    public func createObserver(
        _ table: String, _ types: GQLObserverType, _ condition: String? = nil,
        _ callback: @escaping @Sendable (GQLObserverType, GQLValue) -> Void
    ) throws -> String {
        try createObserver(table, types, condition) { (change: GQLChange) in callback(change.type, change.key) }
    }

    /// Calls `callback` with each committed change to a row of `table` that matches `condition`, including
    /// the tag of the write that made it (``GQLChange/origin``).
    ///
    /// ```swift
    /// let id = try db.createObserver("User", .all) { change in print(change.type, change.key, change.origin ?? "local") }
    /// ```
    public func createObserver(
        _ table: String, _ types: GQLObserverType, _ condition: String? = nil,
        _ callback: @escaping @Sendable (GQLChange) -> Void
    ) throws -> String {
        let schema = try tableSchema(named: table)
        guard schema.hasKey else {
            throw GQLError(
                .missingPrimaryKey, "the table \(table) has no single-column primary key to report changes by",
                table: table)
        }
        return try addObserver(schema, types, condition, callback)
    }

    /// The changes to rows of `table` that match `condition`, as an asynchronous sequence.
    ///
    /// ```swift
    /// for try await change in db.observe("User", [.insert]) { print(change.key) }
    /// ```
    public func observe(_ table: String, _ types: GQLObserverType = .all, _ condition: String? = nil) -> GQLObservation
    {
        GQLObservation(self) { callback in try createObserver(table, types, condition, callback) }
    }

    func addObserver(
        _ schema: TableSchema, _ types: GQLObserverType, _ condition: String?,
        _ callback: @escaping @Sendable (GQLChange) -> Void
    ) throws -> String {
        let id = try writer.writeReentrant { connection in
            let id = try observers.add(
                table: schema, types: types, condition: condition, connection: connection, callback: callback)
            writer.triggersChanged(schema.name)
            return id
        }
        return String(id)
    }

    /// Stops an observer. No callback starts after this returns; unknown ids are ignored.
    public func removeObserver(_ id: String) {
        guard let number = Int(id) else { return }
        _ = try? writer.writeReentrant { connection in
            if let table = observers.remove(number, connection: connection) { writer.triggersChanged(table) }
        }
    }

    /// The number of observers registered on this database.
    public var observerCount: Int { observers.count }
}
