import GQLCore
import GQLNet
import GQLStore

extension GQLSync {
    /// Keeps the model's table up to date while it runs: subscription events are written as they arrive, and a
    /// delta pull runs each time the WebSocket connects, so an event missed while it was down is not missed in
    /// the store.
    ///
    /// The subscriptions start first; every `connected` state of the server's WebSocket (the first one
    /// included) then runs `query` as a delta ``pull(_:query:variables:into:base:progress:)``, once the server has
    /// started the subscriptions (AppSync's `start_ack`s; for the other protocols a query answered on the same
    /// socket after them), so that a change after the pull's read arrives as an event; events that arrive
    /// meanwhile are written after the pulled rows (see <doc:PullAndLive>, "What is not missed"). Events with
    /// `_deleted: true`, and those of `onDelete…` fields, delete their row; others insert or update it, with the
    /// origin ``origin``. As for pulls, a row with unsent outbox items is not overwritten, nor one whose local
    /// `_version` is newer than the event's.
    ///
    /// ```swift
    /// try GQLQuery.shared.load("""
    ///     subscription OnCreateUser { onCreateUser { userId name age _version _deleted } }
    ///     subscription OnUpdateUser { onUpdateUser { userId name age _version _deleted } }
    ///     subscription OnDeleteUser { onDeleteUser { userId _version _deleted } }
    ///     """)
    /// let live = try sync.live(User.self, subscriptions: ["OnCreateUser", "OnUpdateUser", "OnDeleteUser"],
    ///                          query: "SyncUsers")
    /// …
    /// await live.stop()
    /// ```
    /// - Parameters:
    ///   - subscriptions: subscription operations loaded into ``Configuration/queries``.
    ///   - query: the delta query that fills the gaps; `nil` writes events only.
    ///   - store: the database to write into; default the engine's, which must then be the app's.
    /// - Returns: the running sync; ``Live/stop()`` ends it.
    /// - Throws: ``GQLError`` for an unknown operation, one of the wrong kind, or a server without WebSocket.
    public func live<T: GQLObject>(
        _ type: T.Type, subscriptions: [String], query: String? = nil,
        variables: [String: any GQLValueConvertible] = [:], into store: GQLDatabase? = nil
    ) throws -> Live {
        let store = try pullStore(store)
        try store.register(T.self)
        return try live(T.tableName(), subscriptions: subscriptions, query: query, variables: variables, into: store)
    }

    /// ``live(_:subscriptions:query:variables:into:)`` into a table by name.
    public func live(
        _ table: String, subscriptions: [String], query: String? = nil,
        variables: [String: any GQLValueConvertible] = [:], into store: GQLDatabase? = nil
    ) throws -> Live {
        guard server.webSocketURL != nil else {
            throw GQLError(
                .invalidArgument, "live sync needs a server with a WebSocket endpoint for its subscriptions",
                operation: "live")
        }
        guard !subscriptions.isEmpty else {
            throw GQLError(.invalidArgument, "live sync needs at least one subscription", operation: "live")
        }
        let store = try pullStore(store)
        let texts = try subscriptions.map { name -> (name: String, text: String) in
            let document = try configuration.queries.document(named: name)
            guard document.operationType == .subscription else {
                throw GQLError(
                    .invalidArgument, "\"\(name)\" is a \(document.operationType.rawValue), not a subscription",
                    operation: name)
            }
            return (name, document.text)
        }
        let runner = try query.map { try pullRunner(table, query: $0, variables: variables, into: store) }
        let writer = LiveWriter(
            outbox: outbox, store: store, rows: try ServerRows(table: table, in: store), cache: configuration.cache)
        return Live(
            server: server, subscriptions: texts, writer: writer, pull: runner,
            holdLimit: configuration.liveHoldLimit)
    }
}
