import Foundation
import GQLCache
import GQLCore
import GQLNet

extension GQLSync {
    /// How an engine names its outbox, resolves operations, shapes variables and retries.
    ///
    /// ```swift
    /// var configuration = GQLSync.Configuration()
    /// configuration.inputArgument = "input"          // AppSync style: mutation($input: UpdateUserInput!)
    /// configuration.backoff = GQLBackoff(initialDelay: .milliseconds(200), maximumDelay: .seconds(10))
    /// let sync = try GQLSync(server, database: db, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The engine's name: it tells its items apart from other engines' in a shared database and names its
        /// own file. `nil`, the default, derives it from the server's URL (`127.0.0.1-4000-graphql`).
        public var name: String?
        /// Where operation names are looked up when a call is made. Default: ``GQLQuery/shared``.
        public var queries: GQLQuery = .shared
        /// The argument the values are wrapped in, for AppSync-style `input:` arguments: with `"input"`,
        /// `["id": 1, "name": "Ann"]` is sent as the variables `{"input": {"id": 1, "name": "Ann"}}`. `nil`,
        /// the default, sends the values as the variables themselves, as the original library did.
        public var inputArgument: String?
        /// The delays between retries of an item that failed for a transient reason (no connection, timeout,
        /// HTTP 5xx, 408, 429), and between probes while offline; both delays longer than zero. Default: 0.5 s
        /// growing to 30 s, jittered.
        public var backoff = GQLBackoff(initialDelay: .milliseconds(500), maximumDelay: .seconds(30))
        /// Transient failures of one item before it is set aside as failed (at least 1); `nil`, the default, retries it for
        /// as long as it takes (an app can still ``GQLSync/drop(_:)`` it).
        public var maximumAttempts: Int?
        /// How many items one HTTP request may carry, as a JSON array, still in call order, when the server
        /// accepts batches (`gql-cli serve` does); after a server refused one, the engine sends one item per
        /// request. Default 1: one mutation per request.
        public var batchSize = 1
        /// The header that carries each item's idempotency key (the same for every retry of the same item), so
        /// a server can drop a request it already applied (an HTTP header name); `nil` sends none. A batched request
        /// carries one key made of its first and last items' keys and its size, so a batch sent again with the same
        /// items has the same key. Not sent over a WebSocket-only server. Default `Idempotency-Key`.
        public var idempotencyHeader: String? = "Idempotency-Key"
        /// What to do when the server refuses an item as stale (`ConflictUnhandled`). Default ``ConflictResolution/serverWins``.
        public var conflictResolution = ConflictResolution.serverWins
        /// How long a ``ConflictResolution/custom(_:)`` strategy may take to decide one conflict (longer than zero).
        /// One that has not decided by then is cancelled and its item set aside as failed, with a message that says
        /// so (``GQLSync/retry(_:)`` asks the strategy again), and the items behind it go on; what it returns later
        /// is ignored. `nil` waits for as long as it takes. Default 60 seconds: twice a ``GQLServer`` request's
        /// default timeout, so a strategy that asks the server for something once has time to hear back.
        public var conflictTimeout: Duration? = .seconds(60)
        /// How old a pull cursor may get before ``GQLSync/pull(_:query:variables:into:base:progress:)`` asks for
        /// everything again (a base pull) instead of the changes since it: servers keep deleted items' tombstones
        /// only for a while. `nil` never forces a base pull by age. Default 24 hours, as Amplify DataStore's
        /// full sync interval.
        public var baseSyncInterval: Duration? = .seconds(24 * 60 * 60)
        /// The `limit` a pull asks for per page; `nil`, the default, lets the server choose (100 on AppSync and
        /// `gql-cli serve`).
        public var pullPageSize: Int?
        /// The most pages one pull fetches (at least 1): a server that keeps answering new `nextToken`s (a bug, or a
        /// table growing faster than it is read) would otherwise be paged for ever. The pull that reaches it with
        /// a `nextToken` still to ask for throws `.invalidResponse` naming the query and the count; the pages
        /// fetched stay written and the cursor stays where it was, so the next pull asks for them again.
        /// Default 10,000 (a million rows at AppSync's 100 a page).
        public var pullPageLimit = 10_000
        /// A cache that hears what the engine writes: pulled pages and live events become its records (see
        /// ``GQLCache/write(objects:typename:keyField:)``), and each delivered item's answer is stored through its
        /// operation, as `GQLCache.mutate` stores one, so its watchers emit. `nil`, the default: none.
        ///
        /// ```swift
        /// configuration.cache = try GQLCache(database: db)
        /// ```
        public var cache: GQLCache?
        /// Whether the engine delivers its items; off for tools that only read or edit the outbox
        /// (`gql-cli sync status`, `failed`, `retry`, `drop`), so looking never sends.
        package var delivers = true
        /// The clock pull cursors are dated by; tests inject their own.
        package var now: @Sendable () -> Date = { Date() }
        /// The most subscription events a live sync holds while its gap-filling pull runs (see <doc:PullAndLive>);
        /// past it they are written as they come and the pull reads again. Default 10,000; tests set a small one.
        package var liveHoldLimit = 10_000
        /// The jitter's random source; tests inject a fixed one.
        package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

        public init() {}
    }
}
