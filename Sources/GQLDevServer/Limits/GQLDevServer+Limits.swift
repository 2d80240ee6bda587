extension GQLDevServer {
    /// What one request may ask of the server, so that no single request can crash it, hang it or exhaust its
    /// memory. The defaults are far above what applications send; a request over a limit is refused before it
    /// runs, with a GraphQL error whose `extensions.code` names the limit (see <doc:Limits>).
    ///
    /// ```swift
    /// var configuration = GQLDevServer.Configuration()
    /// configuration.limits.maxDepth = 16          // refuse selections nested deeper than 16
    /// configuration.limits.maxCost = 10_000
    /// ```
    public struct Limits: Sendable, Equatable {
        /// The most tokens (names, punctuators, literals) a document may hold; counted on the raw text before
        /// it is parsed. Code `TOKEN_LIMIT_EXCEEDED`. Default 50,000.
        public var maxTokens = 50_000
        /// The deepest nesting of selection sets — fields, inline fragments and fragment spreads each add a
        /// level — in an operation. Code `DEPTH_LIMIT_EXCEEDED`. Default 32.
        public var maxDepth = 32
        /// The deepest nesting of list and object values: literals in arguments and variable defaults, list
        /// types of variables, and the variables' JSON values. Code `VALUE_DEPTH_LIMIT_EXCEEDED`. Default 32.
        public var maxValueDepth = 32
        /// The most field selections in an operation, counted with every fragment spread expanded. Code
        /// `SELECTION_LIMIT_EXCEEDED`. Default 2,000.
        public var maxSelections = 2_000
        /// The most aliased fields in an operation, fragments expanded. Code `ALIAS_LIMIT_EXCEEDED`.
        /// Default 200.
        public var maxAliases = 200
        /// The most an HTTP request (a whole batch) or a WebSocket operation may cost: each field costs 1 times
        /// the `limit`s of the lists it is inside (a list or sync query without `limit` counts 100, one with a
        /// variable limit that is not given counts 1,000). Code `COST_LIMIT_EXCEEDED`. Default 20,000, which keeps the largest allowed request (18 fields of
        /// 1,000 items) under 200 MB of peak memory (`make bench-server` sends it).
        public var maxCost = 20_000
        /// The most bytes of stored values one request may read to answer (the response's size, before JSON).
        /// A request that reaches it stops reading and gets code `RESPONSE_TOO_LARGE`. Default 16 MiB.
        public var maxResponseBytes = 16 << 20
        /// The most operations in one batched HTTP request. Code `BATCH_LIMIT_EXCEEDED`. Default 100.
        public var maxBatchOperations = 100
        /// The most operations running at once on one WebSocket, subscriptions included (AWS AppSync allows
        /// 100 subscriptions per connection). Code `SUBSCRIPTION_LIMIT_EXCEEDED`. Default 100.
        public var maxSubscriptionsPerSocket = 100
        /// The most comparisons and list elements in one `filter` or `condition`. Code
        /// `FILTER_LIMIT_EXCEEDED`. Default 1,000.
        public var maxFilterTerms = 1_000
        /// How long a new connection may take to send its first request's headers before it is answered with
        /// 408 and closed. Default 10 s.
        public var headerTimeout: Duration = .seconds(10)
        /// How long an HTTP connection may stay idle between requests before it is closed. Default 75 s (as
        /// nginx; longer than HTTP clients keep idle pooled connections, so they close first).
        public var idleTimeout: Duration = .seconds(75)

        public init() {}

        /// The deepest bracket nesting the raw-text scan lets through to the parser: what a document within
        /// ``maxDepth`` and ``maxValueDepth`` needs, plus room for arguments and list types.
        var maxNesting: Int { maxDepth + maxValueDepth + 16 }
    }
}
