import GQLCore

/// The async forms run the synchronous ones on a Dispatch worker thread (GQLCore's `offload`): the caller's thread
/// is not held while SQLite works or waits for the writer. Cancelling the calling task does not interrupt them: a
/// write that has begun commits or rolls back, and its true outcome is returned.
extension GQLDatabase {
    /// Runs `body` in one write transaction without blocking the caller's thread.
    ///
    /// `origin` tags the transaction's changes for observers, as in the synchronous form; commit and
    /// rollback hooks run on the worker thread before this returns.
    /// ```swift
    /// try await db.write { tx in try user.insert(tx) }
    /// try await db.write(origin: "sync") { tx in try pulled.insertUpdate(tx) }
    /// ```
    @discardableResult
    public func write<T: Sendable>(
        origin: String? = nil, _ body: @escaping @Sendable (GQLTransaction) throws -> T
    ) async throws -> T {
        try await offload { try self.write(origin: origin, body) }
    }

    /// Closes the database without blocking the caller's thread while reads and the write in progress end.
    ///
    /// ```swift
    /// try await db.close()
    /// ```
    public func close() async throws {
        try await offload { try self.close() }
    }

    /// Runs `body` in one read transaction without blocking the caller's thread.
    public func read<T: Sendable>(_ body: @escaping @Sendable (GQLTransaction) throws -> T) async throws -> T {
        try await offload { try self.read(body) }
    }

    /// Runs raw SQL without blocking the caller's thread.
    @discardableResult
    public func execute(_ sql: String, _ arguments: GQLArguments = GQLArguments()) async throws -> Int {
        try await offload { try self.execute(sql, arguments) }
    }
}
