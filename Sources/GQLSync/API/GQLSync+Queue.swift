import GQLCore
import GQLStore

extension GQLSync {
    /// The engine's statuses: the current one first, then one per change (see ``Status``).
    ///
    /// ```swift
    /// for await status in sync.status {
    ///     if case .failed(let id, let failure)? = status.event { print("item \(id): \(failure)") }
    /// }
    /// ```
    public var status: Statuses { Statuses(driver: driver) }

    /// The items waiting to be delivered, those being sent included.
    ///
    /// ```swift
    /// badge.count = sync.pendingCount
    /// ```
    public var pendingCount: Int { driver.current.pendingCount }

    /// Whether the last exchange with the server reached it.
    public var isOnline: Bool { driver.current.isOnline }

    /// The items the server refused for good, oldest first; the queue went on without them.
    ///
    /// ```swift
    /// for item in try sync.failedItems() { print(item.id, item.name, item.failure) }
    /// ```
    public func failedItems() throws -> [FailedItem] {
        try outbox.failedItems()
    }

    /// Puts a failed item back in the queue at its place in call order, so it is sent next.
    ///
    /// ```swift
    /// try sync.retry(item.id)
    /// ```
    /// - Throws: ``GQLError`` `.notFound` when there is no failed item `id`.
    public func retry(_ id: Int64) throws {
        // An optimistic answer stored with the item shows again, before the item can be sent.
        let outbox = outbox
        let retried = try driver.layers?.retry(id) { try outbox.retry(id) } ?? outbox.retry(id)
        guard retried else {
            throw GQLError(.notFound, "there is no failed outbox item \(id) to retry", operation: "retry")
        }
        driver.adjust(pending: 1, failed: -1)
    }

    /// Removes a failed item for good. The local row it changed keeps the change, which pulls kept the server's
    /// row from overwriting while the item waited: when the item has a key, every pull cursor of the engine is
    /// forgotten, so the next pull of each query is a base pull and brings the server's row back.
    ///
    /// ```swift
    /// try sync.drop(item.id)
    /// ```
    /// - Throws: ``GQLError`` `.notFound` when there is no failed item `id` (pending items are not dropped: the
    ///   delivery loop may be sending them).
    public func drop(_ id: Int64) throws {
        guard try outbox.drop(id) else {
            throw GQLError(.notFound, "there is no failed outbox item \(id) to drop", operation: "drop")
        }
        driver.layers?.dropped(id)
        driver.adjust(pending: 0, failed: -1)
    }

    /// Retries the head item now instead of at the end of its backoff: for an app that knows the network is
    /// back (a reachability callback, a pull-to-refresh).
    ///
    /// ```swift
    /// sync.resume()
    /// ```
    public func resume() {
        driver.resume()
    }

    /// Returns once every pending item was delivered or set aside (the failed ones do not count).
    ///
    /// While the server is unreachable it waits for it; cancel the task to stop waiting.
    /// ```swift
    /// try await sync.drain()
    /// ```
    /// - Throws: ``GQLError`` `.closed` when the engine shuts down first; `CancellationError`.
    public func drain() async throws {
        try await driver.drain()
    }
}
