import Foundation
import GQLCore

/// Completion-handler forms of ``GQLServer``'s operations: thin adapters over the async methods.
///
/// The handler runs once, on an arbitrary thread, with either a result or an error. The returned task can be
/// cancelled; the handler then receives a `GQLError` with code `.cancelled`.
extension GQLServer {
    /// Runs a query and calls `completion` with its result or an error.
    ///
    /// ```swift
    /// server.query("{ listObjects { items { objectId } } }") { result, error in
    ///     if let result { print(result.data ?? .null) } else { print(error!) }
    /// }
    /// ```
    @discardableResult
    public func query(
        _ query: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:],
        completion: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        CompletionBridge.start(completion) { try await self.query(query, variables, headers: headers) }
    }

    /// Runs a mutation and calls `completion` with its result or an error.
    ///
    /// ```swift
    /// server.mutation(create, ["input": ["objectId": "1", "text": "hi"]]) { result, error in
    ///     print(result?.errors ?? [], error as Any)
    /// }
    /// ```
    @discardableResult
    public func mutation(
        _ mutation: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:],
        completion: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        CompletionBridge.start(completion) { try await self.mutation(mutation, variables, headers: headers) }
    }

    /// Sends a batch and calls `completion` with the results in order or an error.
    ///
    /// ```swift
    /// server.batch([(query: "{ listObjects { items { objectId } } }", variables: [:])]) { results, error in }
    /// ```
    @discardableResult
    public func batch(
        _ operations: [(query: String, variables: [String: any GQLValueConvertible])],
        headers: [String: String] = [:],
        completion: @escaping @Sendable ([GQLResult]?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        let operations = operations.map { Operation(query: $0.query, variables: $0.variables) }
        return CompletionBridge.start(completion) {
            try await self.batch(operations.map { ($0.query, $0.variables) }, headers: headers)
        }
    }

    /// One operation of a batch as a `Sendable` value, to cross into the adapter's task.
    private struct Operation: Sendable {
        var query: String
        var variables: [String: any GQLValueConvertible]
    }
}

extension GQLServer {
    /// Starts a subscription whose results go to `handler`, and returns an id for
    /// ``subscription(cancel:completion:)``.
    ///
    /// `handler` runs for every result with `(result, nil)`; at the end it runs once more: with `(nil, error)` when
    /// the subscription failed, `(nil, nil)` when it ended (the server completed it, or ``disconnect()`` or
    /// ``shutdown()`` closed the connection). It is not called after a cancel.
    ///
    /// ```swift
    /// let id = server.subscription("subscription { onCreateObjects { objectId } }") { result, error in
    ///     if let result { print(result.data ?? .null) }
    /// }
    /// server.subscription(cancel: id) { error in }
    /// ```
    @discardableResult
    public func subscription(
        _ subscription: String, _ variables: [String: any GQLValueConvertible] = [:],
        handler: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> String {
        let id = UUID().uuidString
        let results = self.subscription(subscription, variables)
        // Registered under the lock the task's own removal takes, so a subscription that ends at once is not
        // left behind.
        callbackSubscriptions.withLock { running in
            running[id] = Task { [callbackSubscriptions] in
                do {
                    for try await result in results {
                        if Task.isCancelled { break }
                        handler(result, nil)
                    }
                    if !Task.isCancelled { handler(nil, nil) }
                } catch {
                    if !Task.isCancelled { handler(nil, error) }
                }
                _ = callbackSubscriptions.withLock { $0.removeValue(forKey: id) }
            }
        }
        return id
    }

    /// Stops a subscription started with ``subscription(_:_:handler:)``; `completion` gets `nil` once it is
    /// stopped, or a `.notFound` error for an id that is unknown or already ended.
    ///
    /// ```swift
    /// server.subscription(cancel: id) { error in
    ///     if let error { print(error) }
    /// }
    /// ```
    public func subscription(cancel id: String, completion: (@Sendable ((any Error)?) -> Void)? = nil) {
        guard let task = callbackSubscriptions.withLock({ $0.removeValue(forKey: id) }) else {
            completion?(GQLError(.notFound, "no running subscription has the id '\(id)'", operation: "subscription"))
            return
        }
        task.cancel()
        Task {
            await task.value
            completion?(nil)
        }
    }
}
