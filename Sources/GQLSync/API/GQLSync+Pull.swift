import GQLCore
import GQLNet
import GQLStore

extension GQLSync {
    /// What a pull did.
    public struct PullReport: Sendable, Hashable {
        /// Whether the pull asked for everything or for the changes since the cursor.
        public enum Kind: String, Sendable, Hashable {
            /// Everything: there was no cursor, it was older than ``Configuration/baseSyncInterval``, or one
            /// was asked for.
            case base
            /// The changes since the last pull's `startedAt`.
            case delta
        }

        public var kind: Kind
        /// Pages fetched.
        public var pages = 0
        /// Rows inserted or updated.
        public var written = 0
        /// Rows deleted for `_deleted: true` items.
        public var deleted = 0
        /// Server items not written: their local row still has unsent outbox items, or a newer `_version`.
        public var kept = 0
        /// The cursor stored for the next pull (the first page's `startedAt`); `nil` when the server sent none,
        /// so every pull is a base pull.
        public var cursor: Int64?

        public init(kind: Kind) { self.kind = kind }
    }

    /// Pulls the server's changes into the model's table through an AppSync-style delta query.
    ///
    /// The query takes `$nextToken` and `$lastSync` (and `$limit` with ``Configuration/pullPageSize``) and
    /// answers `items`, `nextToken` and `startedAt`. Pages are fetched one after the other and each is written in
    /// a transaction of its own, with the origin ``origin`` so observers hear it. Items with `_deleted: true`
    /// delete their row. A row whose key still has items in the outbox is not overwritten: the local change wins
    /// until it is sent. The first page's `startedAt` is kept per query and variables (a pull with another
    /// `filter` has a cursor of its own), so the next such pull asks only for what changed since; with no cursor,
    /// or one older than ``Configuration/baseSyncInterval``, it asks for everything.
    ///
    /// ```swift
    /// try GQLQuery.shared.load("""
    ///     query SyncUsers($limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
    ///       syncUsers(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
    ///         items { userId name age _version _deleted } nextToken startedAt
    ///       }
    ///     }
    ///     """)
    /// let report = try await sync.pull(User.self, query: "SyncUsers")
    /// print(report.kind, report.written, report.deleted)
    /// ```
    /// - Parameters:
    ///   - query: a query loaded into ``Configuration/queries``.
    ///   - variables: further variables (a `filter`, say), sent with every page; they key the cursor with `query`.
    ///   - store: the database to write into; default the engine's, which must then be the app's
    ///     (``init(_:database:configuration:)``).
    ///   - base: ask for everything even when the cursor is fresh.
    ///   - progress: called after each page with the report so far.
    /// - Throws: ``GQLError`` for an unknown query or one that does not take `$nextToken`; the transport errors
    ///   of ``GQLServer/query(_:_:headers:)``; ``GQLResult/Failure`` when a page has GraphQL errors (the pages
    ///   before it stay written, the cursor does not move); `.invalidResponse` when the pages go round in a circle
    ///   or still go on after ``Configuration/pullPageLimit`` of them (the same: pages kept, cursor not moved).
    @discardableResult
    public func pull<T: GQLObject>(
        _ type: T.Type, query: String, variables: [String: any GQLValueConvertible] = [:],
        into store: GQLDatabase? = nil, base: Bool = false,
        progress: (@Sendable (PullReport) -> Void)? = nil
    ) async throws -> PullReport {
        let store = try pullStore(store)
        try store.register(T.self)
        return try await pull(
            T.tableName(), query: query, variables: variables, into: store, base: base, progress: progress)
    }

    /// ``pull(_:query:variables:into:base:progress:)`` into a table by name (any table with a single-column
    /// primary key), for code without a model type, such as `gql-cli sync pull`.
    ///
    /// ```swift
    /// try await sync.pull("Note", query: "SyncNotes")
    /// ```
    @discardableResult
    public func pull(
        _ table: String, query: String, variables: [String: any GQLValueConvertible] = [:],
        into store: GQLDatabase? = nil, base: Bool = false,
        progress: (@Sendable (PullReport) -> Void)? = nil
    ) async throws -> PullReport {
        try await pullRunner(table, query: query, variables: variables, into: store)
            .run(forceBase: base, progress: progress)
    }

    /// Forgets the cursor of `query`, so its next pull is a base pull: the one of its pulls with `variables`, or,
    /// when `variables` is nil (the default), of all its pulls whatever their variables.
    ///
    /// ```swift
    /// try sync.resetCursor("SyncUsers")
    /// try sync.resetCursor("SyncUsers", variables: ["filter": ["team": ["eq": "blue"]]])
    /// ```
    public func resetCursor(_ query: String, variables: [String: any GQLValueConvertible]? = nil) throws {
        try outbox.removeCursor(
            query, variables: variables.map { try OutboxStore.cursorVariables(GQLValues(converting: $0)) })
    }

    /// A stored pull cursor: where the last complete pull of `query` with `variables` left off.
    package struct PullCursor: Sendable, Hashable {
        /// The pull query's name.
        package var query: String
        /// The pull's variables as JSON with sorted members; `""` for a pull without variables.
        package var variables: String
        /// The server's `startedAt` of the pull's first page (ms since 1970): the next delta pull's `lastSync`.
        package var startedAt: Int64
    }

    /// The stored pull cursors of this engine, by query and then variables.
    package func pullCursors() throws -> [PullCursor] {
        try outbox.cursors()
    }

    // MARK: Shared

    func pullRunner(
        _ table: String, query: String, variables: [String: any GQLValueConvertible], into store: GQLDatabase?
    ) throws -> PullRunner {
        let store = try pullStore(store)
        let document = try configuration.queries.document(named: query)
        guard document.operationType == .query else {
            throw GQLError(
                .invalidArgument, "\"\(query)\" is a \(document.operationType.rawValue), not a query to pull with",
                operation: query)
        }
        guard document.text.contains("$nextToken") else {
            throw GQLError(
                .invalidArgument,
                "\"\(query)\" does not take $nextToken, so a pull could read only its first page", operation: query)
        }
        if let size = configuration.pullPageSize, size < 1 {
            throw GQLError(.invalidArgument, "pullPageSize must be at least 1, not \(size)", operation: query)
        }
        guard configuration.pullPageLimit >= 1 else {
            throw GQLError(
                .invalidArgument, "pullPageLimit must be at least 1, not \(configuration.pullPageLimit)",
                operation: query)
        }
        let values = GQLValues(converting: variables)
        return PullRunner(
            server: server, outbox: outbox, store: store, rows: try ServerRows(table: table, in: store),
            query: query, text: document.text, variables: values,
            cursorVariables: try OutboxStore.cursorVariables(values),
            pageSize: configuration.pullPageSize, pageLimit: configuration.pullPageLimit,
            baseInterval: configuration.baseSyncInterval,
            now: configuration.now, cache: configuration.cache)
    }

    /// The database pulls and live events write into.
    func pullStore(_ store: GQLDatabase?) throws -> GQLDatabase {
        if let store { return store }
        guard !ownsDatabase else {
            throw GQLError(
                .invalidArgument,
                "this engine's outbox is a file of its own; pass the app's database (into:) to write server rows",
                operation: "pull")
        }
        return database
    }
}
