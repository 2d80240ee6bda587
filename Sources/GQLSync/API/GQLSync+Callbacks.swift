import Dispatch
import GQLCore
import GQLNet

/// Completion-handler forms of ``GQLSync``'s calls: thin adapters over the async methods.
///
/// The handler runs once, on an arbitrary thread, with either a value or an error. Calls queued this way commit
/// one after the other on the engine's own serial queue, so they keep their call order.
extension GQLSync {
    /// Queues a lazy mutation (see ``lazy(_:_:_:)``) and calls `completion` with the item's id once it is
    /// committed, or with the error.
    ///
    /// ```swift
    /// sync.lazy("UpdateUser", values, 1001) { id, error in
    ///     if let error { print("not queued: \(error)") }
    /// }
    /// ```
    public func lazy(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: some GQLValueConvertible,
        completion: @escaping @Sendable (Int64?, (any Error)?) -> Void
    ) {
        let key = key.gqlValue
        let values = values.mapValues(\.gqlValue)
        CompletionBridge.run(on: callbackQueue, completion) { try self.lazy(name, values, key) }
    }

    /// Queues a steady mutation (see ``steady(_:_:_:)``) and calls `completion` with the item's id once it is
    /// committed, or with the error.
    ///
    /// ```swift
    /// sync.steady("CreatePost", post.values()) { id, error in print(id ?? -1, error as Any) }
    /// ```
    public func steady(
        _ name: String, _ values: [String: any GQLValueConvertible], _ key: (any GQLValueConvertible)? = nil,
        completion: @escaping @Sendable (Int64?, (any Error)?) -> Void
    ) {
        let key = key?.gqlValue
        let values = values.mapValues(\.gqlValue)
        CompletionBridge.run(on: callbackQueue, completion) { try self.steady(name, values, key) }
    }

    /// Sends a mutation now, ahead of the queue, without storing it (see ``force(_:_:)``), and calls
    /// `completion` with the server's answer or the error.
    ///
    /// ```swift
    /// sync.force("UpdateUser", values) { result, error in
    ///     if let result { print(result.data ?? .null) } else { print(error!) }
    /// }
    /// ```
    @discardableResult
    public func force(
        _ name: String, _ values: [String: any GQLValueConvertible],
        completion: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        let values = values.mapValues(\.gqlValue)
        return CompletionBridge.start(completion) { try await self.force(name, values) }
    }

    /// Calls `completion` once every pending item was delivered or set aside (see ``drain()``), or with the
    /// error that stopped the wait.
    ///
    /// ```swift
    /// sync.drain { error in print(error == nil ? "all sent" : "\(error!)") }
    /// ```
    @discardableResult
    public func drain(completion: @escaping @Sendable ((any Error)?) -> Void) -> Task<Void, Never> {
        CompletionBridge.start(completion) { try await self.drain() }
    }
}
