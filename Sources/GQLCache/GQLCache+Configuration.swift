import Foundation
import GQLNet

extension GQLCache {
    /// How a cache names its records, matches fragments and sizes its memory layer.
    ///
    /// ```swift
    /// var configuration = GQLCache.Configuration()
    /// configuration.keyFields = ["Post": ["author", "slug"]]
    /// configuration.possibleTypes = ["Node": ["User", "Post"]]
    /// let cache = try GQLCache(path: "cache.sqlite", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The fields whose values make the key of an object of a type (`["Post": ["author", "slug"]]` gives
        /// `Post:ada,hello`). An object of a listed type that lacks one of them is stored under its parent's path.
        public var keyFields: [String: [String]] = [:]
        /// For every other type, the first of these fields an object has makes its key.
        public var defaultKeyFields: [String] = ["id", "objectId", "_id"]
        /// The concrete types of each interface or union (`["Node": ["User", "Post"]]`): a fragment on `Node` then
        /// applies to a `User`. Without an entry a fragment applies only to objects of exactly its type.
        public var possibleTypes: [String: Set<String>] = [:]
        /// Where operation names are looked up (``GQLQuery/shared`` unless set).
        public var queries: GQLQuery = .shared
        /// Most records kept in memory in front of SQLite; past it half are dropped from memory (not from the file).
        public var memoryLimit = 100_000
        /// How long a field stays fresh after it was written, by type (`"User"`) or by field (`"User.name"`,
        /// which wins over its type); root fields are `"Query.field"` and `"Mutation.field"`. A field past its
        /// age is stale: it is served with ``Result/isStale`` and refreshed (see ``Policy``).
        ///
        /// ```swift
        /// configuration.maxAge = ["Note": .seconds(600), "Note.views": .seconds(30)]
        /// ```
        public var maxAge: [String: Duration] = [:]
        /// The age of fields no ``maxAge`` entry names; `nil` (the default): they never go stale.
        public var defaultMaxAge: Duration? = nil
        /// Most bytes the record table may hold (each record's key and its stored fields); past it the least recently
        /// read records are removed until 90% of it is left. `nil` (the default): no budget, and no read times
        /// are kept.
        ///
        /// ```swift
        /// configuration.maximumBytes = 50 << 20   // 50 MiB
        /// ```
        public var maximumBytes: Int? = nil
        /// The time now, for expiry and for the read times that pick what a byte budget trims; tests inject
        /// their own.
        public var clock: @Sendable () -> Date = { Date() }

        public init() {}
    }
}
