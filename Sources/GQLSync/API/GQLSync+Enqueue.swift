import GQLCore
import GQLNet
import GQLStore

extension GQLSync {
    /// Queues a mutation that merges into the unsent item for the same operation and key: newer fields win,
    /// earlier fields are kept. Returns the item's id once it is committed.
    ///
    /// A call made after the item was handed to the network (sent, being sent, or retried) becomes a new item
    /// behind it, so no value is ever taken for sent without being sent; so does a call that follows another
    /// item for the same key, so the order of changes to an object is kept.
    /// ```swift
    /// try sync.lazy("UpdateUser", ["userId": 1001, "name": "Ann"], 1001)
    /// try sync.lazy("UpdateUser", ["userId": 1001, "age": 43], 1001)   // one item: name and age
    /// ```
    /// - Parameters:
    ///   - name: an operation loaded into ``Configuration/queries``; its text is captured now.
    ///   - values: the mutation's variables (or its `input`, see ``Configuration/inputArgument``).
    ///   - key: the object the call changes.
    /// - Throws: ``GQLError`` `.invalidArgument` for an unknown operation or one that is not a mutation; the
    ///   database's errors when the item cannot be committed.
    @discardableResult
    public func lazy(_ name: String, _ values: [String: any GQLValueConvertible], _ key: some GQLValueConvertible)
        throws -> Int64
    {
        try enqueue(.lazy, name, values, key.gqlValue)
    }

    /// Queues a mutation that is always sent as its own item, in call order. Returns its id once committed.
    ///
    /// ```swift
    /// try sync.steady("CreatePost", ["id": post.id, "title": post.title])
    /// try sync.steady("UpdateUser", values, 1001)
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` for an unknown operation or one that is not a mutation.
    @discardableResult
    public func steady(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: (any GQLValueConvertible)? = nil
    ) throws -> Int64 {
        try enqueue(.steady, name, values, key?.gqlValue)
    }

    /// ``lazy(_:_:_:)`` without blocking the caller's thread while the item is committed.
    @discardableResult
    public func lazy(_ name: String, _ values: [String: any GQLValueConvertible], _ key: some GQLValueConvertible)
        async throws -> Int64
    {
        try await enqueueAsync(.lazy, name, values, key.gqlValue)
    }

    /// ``steady(_:_:_:)`` without blocking the caller's thread while the item is committed.
    @discardableResult
    public func steady(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: (any GQLValueConvertible)? = nil
    ) async throws -> Int64 {
        try await enqueueAsync(.steady, name, values, key?.gqlValue)
    }

    /// ``lazy(_:_:_:)`` inside the caller's write: the item commits with the caller's changes, or not at all.
    ///
    /// ```swift
    /// try db.write { tx in
    ///     try user.update(tx)
    ///     try sync.lazy("UpdateUser", user.values(), user.userId, in: tx)
    /// }
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` when `tx` belongs to another database than the outbox's.
    @discardableResult
    public func lazy(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: some GQLValueConvertible,
        in tx: GQLTransaction
    ) throws -> Int64 {
        try enqueue(.lazy, name, values, key.gqlValue, in: tx)
    }

    /// ``steady(_:_:_:)`` inside the caller's write: the item commits with the caller's changes, or not at all.
    ///
    /// ```swift
    /// try db.write { tx in
    ///     try post.insert(tx)
    ///     try sync.steady("CreatePost", post.values(), post.id, in: tx)
    /// }
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` when `tx` belongs to another database than the outbox's.
    @discardableResult
    public func steady(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: (any GQLValueConvertible)? = nil,
        in tx: GQLTransaction
    ) throws -> Int64 {
        try enqueue(.steady, name, values, key?.gqlValue, in: tx)
    }

    /// Sends a mutation now, ahead of the queue, without storing it, and returns the server's answer.
    ///
    /// ```swift
    /// let result = try await sync.force("UpdateUser", values)
    /// ```
    /// - Throws: ``GQLError`` for an unknown operation, and the transport errors of ``GQLServer/mutation(_:_:headers:)``;
    ///   GraphQL errors are in the result.
    public func force(_ name: String, _ values: [String: any GQLValueConvertible]) async throws -> GQLResult {
        let (query, variables) = try request(name, values)
        return try await server.mutation(query, variables.dictionary)
    }

    // MARK: Shared

    private func enqueue(
        _ mode: OutboxMode, _ name: String, _ values: [String: any GQLValueConvertible], _ key: GQLValue?
    ) throws -> Int64 {
        let call = try capture(mode, name, values, key)
        let outbox = outbox
        let enqueued = try outbox.queueWrite { tx in try outbox.enqueue(call, in: tx) }
        driver.enqueued(enqueued)
        return enqueued.id
    }

    private func enqueueAsync(
        _ mode: OutboxMode, _ name: String, _ values: [String: any GQLValueConvertible], _ key: GQLValue?
    ) async throws -> Int64 {
        let call = try capture(mode, name, values, key)
        let outbox = outbox
        let enqueued = try await outbox.queueWrite { tx in try outbox.enqueue(call, in: tx) }
        driver.enqueued(enqueued)
        return enqueued.id
    }

    private func enqueue(
        _ mode: OutboxMode, _ name: String, _ values: [String: any GQLValueConvertible], _ key: GQLValue?,
        in tx: GQLTransaction
    ) throws -> Int64 {
        guard tx.database === database else {
            throw GQLError(
                .invalidArgument,
                "the transaction belongs to \(tx.database.path), but this engine's outbox is in \(database.path); "
                    + "make the engine with GQLSync(server, database:) to enqueue inside the app's writes",
                operation: name)
        }
        let enqueued = try outbox.enqueue(try capture(mode, name, values, key), in: tx)
        let driver = driver
        try tx.afterCommit { driver.enqueued(enqueued) }
        return enqueued.id
    }

    /// The operation's document, checked to be a mutation.
    private func document(_ name: String) throws -> GQLQuery.Document {
        let document = try configuration.queries.document(named: name)
        guard document.operationType == .mutation else {
            throw GQLError(
                .invalidArgument,
                "\"\(name)\" is a \(document.operationType.rawValue), not a mutation; only mutations are queued",
                operation: name)
        }
        return document
    }

    /// The call with its operation's text and its values captured now: the values as JSON text, and as values
    /// too for a lazy call, which may merge them into an earlier item.
    func capture(
        _ mode: OutboxMode, _ name: String, _ values: [String: any GQLValueConvertible], _ key: GQLValue?
    ) throws -> OutboxStore.Call {
        let operation = OutboxStore.Operation(
            name: name, query: try document(name).text, wrap: configuration.inputArgument)
        let captured = mode == .lazy ? GQLValues(converting: values) : nil
        do {
            let input = try captured.map(OutboxJSON.object) ?? OutboxJSON.object(values)
            return OutboxStore.Call(mode: mode, operation: operation, input: input, values: captured, key: key)
        } catch var error as GQLError {
            // A value JSON cannot hold (NaN, an infinity): the message names it, and the call.
            error.operation = name
            throw error
        }
    }

    /// The text and variables of a request, shaped by ``Configuration/inputArgument``.
    private func request(_ name: String, _ values: [String: any GQLValueConvertible]) throws -> (String, GQLValues) {
        let (query, captured) = (try document(name).text, GQLValues(converting: values))
        guard let wrap = configuration.inputArgument else { return (query, captured) }
        return (query, [wrap: .object(captured)])
    }
}
