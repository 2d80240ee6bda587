import GQLCore
import GQLNet
import GQLStore

extension GQLSync {
    /// ``steady(_:_:_:)`` with the answer the app expects the server to give: laid over the engine's
    /// ``Configuration/cache`` at once, so the cache's watchers show the change while the item waits; replaced
    /// by the server's answer when the item is delivered, rolled back when it is set aside or dropped. The answer
    /// is stored with the item, in the same transaction, and shown again after a restart while the item is
    /// pending.
    ///
    /// ```swift
    /// try sync.steady("UpdateNote", ["id": "1", "title": "Ada"], "1",
    ///                 optimistic: ["updateNote": ["__typename": "Note", "id": "1", "title": "Ada"]])
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` when the engine has no cache; `.invalidResponse` when the answer
    ///   does not fit the operation's selection; what ``steady(_:_:_:)`` throws.
    @discardableResult
    public func steady(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: (any GQLValueConvertible)? = nil,
        optimistic: GQLValue
    ) throws -> Int64 {
        try enqueue(.steady, name, values, key?.gqlValue, optimistic: optimistic)
    }

    /// ``lazy(_:_:_:)`` with an optimistic answer, as ``steady(_:_:_:optimistic:)``; a call merged into an
    /// unsent item replaces that item's answer.
    ///
    /// ```swift
    /// try sync.lazy("UpdateNote", ["id": "1", "title": "Ada"], "1",
    ///               optimistic: ["updateNote": ["__typename": "Note", "id": "1", "title": "Ada"]])
    /// ```
    @discardableResult
    public func lazy(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: some GQLValueConvertible,
        optimistic: GQLValue
    ) throws -> Int64 {
        try enqueue(.lazy, name, values, key.gqlValue, optimistic: optimistic)
    }

    private func enqueue(
        _ mode: OutboxMode, _ name: String, _ values: [String: any GQLValueConvertible], _ key: GQLValue?,
        optimistic: GQLValue
    ) throws -> Int64 {
        guard let layers = driver.layers else {
            throw GQLError(
                .invalidArgument, "an optimistic answer needs a cache: set the engine's configuration.cache",
                operation: name)
        }
        let call = try capture(mode, name, values, key)
        let captured = GQLValues(converting: values)
        let variables = configuration.inputArgument.map { [$0: GQLValue.object(captured)] as GQLValues } ?? captured
        let outbox = outbox
        let (enqueued, answer) = try outbox.queueWrite { tx in
            let enqueued = try outbox.enqueue(call, in: tx)
            let answer = OutboxLayers.Answer(
                item: enqueued.id, query: call.operation.query, variables: variables, data: optimistic)
            try layers.save(answer, in: tx)
            return (enqueued, answer)
        }
        try layers.show(answer)
        driver.enqueued(enqueued)
        return enqueued.id
    }
}
