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
        let schema = try db.schema(Self.self)
        let id = try db.writer.writeReentrant { connection in
            let id = try db.observers.add(
                table: schema, types: types, condition: condition, connection: connection, callback: callback)
            db.writer.triggersChanged(schema.name)
            return id
        }
        return String(id)
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
