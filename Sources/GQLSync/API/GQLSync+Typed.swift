import GQLCore
import GQLNet

extension GQLSync {
    /// Queues a generated mutation (`gql-cli codegen`) as its own item, in call order, like
    /// ``steady(_:_:_:)``: its document and variables are captured now, no ``Configuration/queries`` look-up and
    /// no ``Configuration/inputArgument`` wrapping (the generated variables are the whole request's).
    ///
    /// ```swift
    /// try sync.steady(UpdateUserMutation(input: .init(id: "1", name: "Ann")), key: 1)
    /// ```
    /// - Throws: the database's errors when the item cannot be committed.
    @discardableResult
    public func steady<Mutation: GQLTypedMutation>(_ mutation: Mutation, key: (any GQLValueConvertible)? = nil)
        throws -> Int64
    {
        let call = try typedCall(mutation, key?.gqlValue)
        let outbox = outbox
        let enqueued = try outbox.queueWrite { tx in try outbox.enqueue(call, in: tx) }
        driver.enqueued(enqueued)
        return enqueued.id
    }

    /// ``steady(_:key:)`` without blocking the caller's thread while the item is committed.
    @discardableResult
    public func steady<Mutation: GQLTypedMutation>(_ mutation: Mutation, key: (any GQLValueConvertible)? = nil)
        async throws -> Int64
    {
        let call = try typedCall(mutation, key?.gqlValue)
        let outbox = outbox
        let enqueued = try await outbox.queueWrite { tx in try outbox.enqueue(call, in: tx) }
        driver.enqueued(enqueued)
        return enqueued.id
    }

    private func typedCall<Mutation: GQLTypedMutation>(_ mutation: Mutation, _ key: GQLValue?) throws
        -> OutboxStore.Call
    {
        let operation = OutboxStore.Operation(name: Mutation.operationName, query: Mutation.document, wrap: nil)
        do {
            let input = try OutboxJSON.object(mutation.variables.gqlValue.objectValue ?? [:])
            return OutboxStore.Call(mode: .steady, operation: operation, input: input, values: nil, key: key)
        } catch var error as GQLError {
            error.operation = Mutation.operationName
            throw error
        }
    }
}
