import GQLCore
import GQLNet

extension GQLSync {
    /// What an engine does when the server refuses an item because the object changed there first
    /// (AppSync's `ConflictUnhandled`: the `_version` sent is not the server's).
    ///
    /// ```swift
    /// configuration.conflictResolution = .clientWins
    /// configuration.conflictResolution = .custom { conflict in
    ///     var merged = conflict.server
    ///     merged["title"] = conflict.values["title"]      // ours for the title, theirs for the rest
    ///     return .merged(merged)
    /// }
    /// ```
    public enum ConflictResolution: Sendable {
        /// The server's item is kept: written to the local store (when the engine has one and a table of the
        /// mutation's type exists) and the local change is dropped. The default.
        case serverWins
        /// The local change is sent again with the server's `_version`, at its place in the queue.
        case clientWins
        /// The closure decides, per conflict; a closure that throws sets the item aside. Delivery waits for it for
        /// up to ``Configuration/conflictTimeout``, then sets the item aside as failed and goes on; ``GQLSync/shutdown()``
        /// does not wait: the closure's task is cancelled, and the item stays queued as it was.
        case custom(@Sendable (Conflict) async throws -> Resolution)
    }

    /// One conflict, as a custom strategy sees it.
    public struct Conflict: Sendable, Hashable {
        /// The item's id in the outbox.
        public var id: Int64
        /// The operation's name.
        public var name: String
        /// The key the call named, if any.
        public var key: GQLValue?
        /// The values the call queued (without the `input` wrapping).
        public var values: GQLValues
        /// The server's current item, as the conflict error carried it (empty when it carried none).
        public var server: GQLValues
        /// The errors of the server's answer.
        public var failure: Failure
    }

    /// A custom strategy's answer.
    public enum Resolution: Sendable, Hashable {
        /// Keep the server's item; drop the local change.
        case serverWins
        /// Send the local change again with the server's `_version`.
        case clientWins
        /// Send these values instead (the server's `_version` is added when they lack one).
        case merged(GQLValues)
    }
}
