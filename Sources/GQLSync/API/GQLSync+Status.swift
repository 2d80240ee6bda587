import GQLCore

extension GQLSync {
    /// A snapshot of an engine: online or not, how many items wait, which are being sent, what just happened.
    ///
    /// ```swift
    /// for await status in sync.status {
    ///     print(status.isOnline ? "online" : "offline", status.pendingCount, status.event.map { "\($0)" } ?? "")
    /// }
    /// ```
    public struct Status: Sendable, Hashable {
        /// Whether the last exchange reached the server (a server error counts as reached; no connection,
        /// a timeout or a refused connection does not).
        public var isOnline: Bool
        /// Items waiting to be delivered, those being sent included.
        public var pendingCount: Int
        /// Items set aside as failed (see ``GQLSync/failedItems()``).
        public var failedCount: Int
        /// The ids of the items being sent now.
        public var inFlight: [Int64]
        /// Items delivered since the engine started.
        public var sentCount: Int
        /// What changed, when the snapshot was made because something happened.
        public var event: Event?
    }

    /// Something that happened to an engine or one of its items.
    public enum Event: Sendable, Hashable {
        /// A call was queued as a new item, or merged into the unsent item `id`.
        case queued(id: Int64, merged: Bool)
        /// These items were handed to the network (one request).
        case sending(ids: [Int64])
        /// The server applied item `id`.
        case sent(id: Int64, name: String)
        /// Item `id` failed for a transient reason and is retried after `delay`.
        case retrying(id: Int64, attempt: Int, delay: Duration, GQLSync.Failure)
        /// The next items could not be read from the outbox (a SQLite error: the file is locked, full, damaged or
        /// edited by hand); the engine tries again after `delay`, backing off while it keeps failing.
        case claimFailed(delay: Duration, GQLSync.Failure)
        /// Item `id` was refused for good and set aside.
        case failed(id: Int64, GQLSync.Failure)
        /// Item `id` met a newer version on the server; `resolution` says what the strategy chose (`serverWins`,
        /// `clientWins`, `merged`), or `unresolved` when the engine shut down before a custom strategy decided (the
        /// item stays queued).
        case conflict(id: Int64, resolution: String)
        /// The server answered again after being unreachable.
        case online
        /// The server could not be reached; the engine probes with backoff until it can (or ``GQLSync/resume()``).
        case offline
        /// Every pending item was delivered or set aside.
        case drained
        /// The engine stopped (``GQLSync/shutdown()``, or its outbox could no longer be written).
        case stopped(String?)
    }

    /// The statuses of an engine, as an `AsyncSequence`: the current one first, then one per change.
    ///
    /// Every iteration gets its own copy of the sequence, buffered without limit so no event is lost; it ends
    /// when the engine shuts down.
    /// ```swift
    /// for await status in sync.status where status.event == .drained { break }
    /// ```
    public struct Statuses: AsyncSequence, Sendable {
        public typealias Element = Status
        let driver: DeliveryDriver

        public func makeAsyncIterator() -> AsyncStream<Status>.Iterator {
            driver.subscribe().makeAsyncIterator()
        }
    }
}
