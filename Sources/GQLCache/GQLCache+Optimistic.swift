import GQLCore

extension GQLCache {
    /// An optimistic layer in place: what ``removeOptimisticLayer(_:)`` takes.
    public struct Layer: Sendable, Hashable {
        /// Unique among the layers of one cache, for as long as it runs.
        public let id: UInt64
    }

    /// Lays `data`, the answer an operation (a name in ``Configuration/queries`` or text) is expected to get
    /// with `variables`, over the cache: every read and watcher sees it, until the layer is removed. Nothing is
    /// written to the records underneath, so removing the layer is a rollback. Layers stack, newest on top, and
    /// can be removed in any order.
    ///
    /// ``mutate(_:_:_:optimistic:store:)`` adds and removes one for you; GQLSync adds one per outbox item that
    /// carries an optimistic answer.
    /// ```swift
    /// let layer = try cache.addOptimisticLayer(
    ///     "UpdateUser", ["input": ["id": "1", "name": "Ada"]],
    ///     data: ["updateUser": ["__typename": "User", "id": "1", "name": "Ada"]])
    /// defer { cache.removeOptimisticLayer(layer) }
    /// ```
    /// - Throws: ``GQLError`` `.invalidResponse` naming the path of a value that does not fit the selection;
    ///   `.invalidArgument` for an operation that does not parse or is unknown.
    public func addOptimisticLayer(
        _ operation: String, _ variables: [String: any GQLValueConvertible] = [:], data: GQLValue
    ) throws -> Layer {
        let operation = try self.operation(operation)
        let given = GQLValues(converting: variables)
        return try addLayer(
            Request(operation: operation, given: given, variables: operation.variables(given), store: true),
            data: data)
    }

    /// Removes an optimistic layer: watchers of what it covered read again, now without it (the records
    /// underneath, or the layers still in place). Removing a layer twice, or after ``clear()``, does nothing.
    ///
    /// ```swift
    /// cache.removeOptimisticLayer(layer)
    /// ```
    public func removeOptimisticLayer(_ layer: Layer) {
        watchers.notify(store.removeLayer(layer.id))
    }

    /// How many optimistic layers are in place (for tests and tools).
    package var optimisticLayerCount: Int { store.layerCount }

    /// How many record keys reads have looked up in SQLite since the cache opened (for tests: a read the memory
    /// layer answers, layers or not, looks up none).
    package var keysReadFromTable: Int { store.memory.withLock { $0.keysReadFromTable } }

    /// Adds the layer of `data` for `request` and wakes the watchers of what it covers.
    func addLayer(_ request: Request, data: GQLValue) throws -> Layer {
        let records = try normalize(data, request.operation, request.variables)
        let layer = Dictionary(uniqueKeysWithValues: records.lazy.map { ($0.key, $0.fields) })
        let (id, keys) = store.addLayer(layer, receivedAt: expiry.isOn ? now : nil)
        watchers.notify(keys)
        return Layer(id: id)
    }
}
