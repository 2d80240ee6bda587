import GQLNet

extension GQLCache {
    /// Where an answer comes from, and whether it may go to the network for it.
    ///
    /// ```swift
    /// let result = try await cache.fetch(server, "UserQuery", ["id": 1], policy: .networkFirst)
    /// ```
    public enum Policy: String, Sendable, Hashable, CaseIterable {
        /// The cache's answer when it has every field; the network's otherwise (stored).
        case cacheFirst
        /// The cache's answer, or ``GQLError`` `.cacheMiss` naming the first missing field. Never the network.
        case cacheOnly
        /// The network's answer (stored); the cache is not read.
        case networkOnly
        /// The network's answer (stored); when the network fails (the server is down, the device offline, an HTTP
        /// error), the cache's answer if it has one, else the network's error.
        case networkFirst
        /// The cache's answer at once when it has every field, then the network's: ``GQLCache/watch(_:_:_:policy:store:)``
        /// emits both; ``GQLCache/fetch(_:_:_:policy:store:maxStale:)`` returns the cached one and refreshes the cache in the
        /// background (the network's, when the cache misses).
        case cacheAndNetwork
    }

    /// Where a result came from.
    public enum Source: String, Sendable, Hashable {
        case cache
        case network
    }

    /// A result of the cache: the ``GQLResult`` (data and errors) with where it came from.
    ///
    /// ```swift
    /// let result = try await cache.fetch(server, "UserQuery", ["id": 1])
    /// if result.source == .cache { print("offline copy") }
    /// let name = result.data?["user"]?["name"]?.stringValue
    /// ```
    public struct Result: Sendable, Hashable {
        /// The answer: `data` as the server would send it, and the server's `errors` (none from the cache).
        public var result: GQLResult
        /// ``Source/cache`` or ``Source/network``.
        public var source: Source
        /// Whether the cached answer holds a field past its ``Configuration/maxAge`` (a network answer: never).
        public var isStale: Bool

        public init(result: GQLResult, source: Source, isStale: Bool = false) {
            self.result = result
            self.source = source
            self.isStale = isStale
        }

        /// The answer's `data`.
        public var data: GQLValue? { result.data }
        /// The answer's `errors`.
        public var errors: [GQLResult.Error] { result.errors }
    }
}
