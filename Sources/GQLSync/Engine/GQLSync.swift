import Foundation
import GQLCore
import GQLNet
import GQLStore

/// An offline-first sync engine: a durable, ordered outbox of mutations delivered to one server.
///
/// Calls return once the item is committed to SQLite; a background loop sends items one after the other in
/// call order, retries transient failures with backoff (nothing overtakes the item being retried), sets aside
/// items the server refuses for good, and hands stale-version conflicts to a strategy.
///
/// ```swift
/// let server = GQLServer(HTTP: "https://example.com/graphql")
/// let sync = try GQLSync(server)                       // outbox in its own file beside the app's data
/// let sync = try GQLSync(server, database: db)         // or in the app's database (tables _gqlsync_…)
///
/// try sync.lazy("UpdateUser", values, 1001)            // merged into the unsent item for the same key
/// try sync.steady("UpdateUser", values, 1001)          // every call sent, in order
/// let result = try await sync.force("UpdateUser", values)   // now, ahead of the queue, not stored
/// try db.write { tx in                                 // the change and its mutation commit together
///     try user.update(tx)
///     try sync.steady("UpdateUser", user.values(), user.userId, in: tx)
/// }
/// try await sync.drain()
/// ```
public final class GQLSync: Sendable {
    /// The origin tag of the writes the engine makes to the app's database (pulled rows, conflict winners),
    /// as observers see it in ``GQLChange/origin``.
    public static let origin = "sync"

    /// The server the items go to.
    public let server: GQLServer
    /// The database the outbox lives in: the app's, or the engine's own file.
    public let database: GQLDatabase
    /// The engine's name, which tells its items apart from other engines' in a shared database.
    public let name: String
    /// The settings the engine was made with.
    public let configuration: Configuration

    let outbox: OutboxStore
    let driver: DeliveryDriver
    /// Whether ``database`` is the engine's own file, closed by ``shutdown()``.
    let ownsDatabase: Bool
    /// Where the completion-handler forms commit their items, one after the other, in call order.
    let callbackQueue = DispatchQueue(label: "GraphQLite.GQLSync.callbacks")
    private let loop: GQLLocked<Task<Void, Never>?>
    private let registration: String

    /// An engine whose outbox is its own file, `gqlsync-<name>.sqlite`, in the app-data directory
    /// (``GQLDatabase/defaultDirectory()``). A name that is not all lower-case ASCII letters, digits, `.`, `-` and
    /// `_`, or is too long, gets a safe file name instead: a readable prefix, `~` and a hash of the name; an outbox
    /// an earlier version made under the name as it was keeps being opened there.
    ///
    /// ```swift
    /// let sync = try GQLSync(GQLServer(HTTP: "https://example.com/graphql"))
    /// ```
    /// - Throws: ``GQLError`` when the file cannot be opened, another engine of this name runs on it, or a setting
    ///   is out of range (`.invalidArgument`: ``Configuration/batchSize``, ``Configuration/maximumAttempts``,
    ///   ``Configuration/idempotencyHeader``, ``Configuration/backoff``, ``Configuration/conflictTimeout``).
    public convenience init(_ server: GQLServer, configuration: Configuration = Configuration()) throws {
        let name = configuration.name ?? Self.defaultName(server)
        let path = Self.outboxPath(in: try GQLDatabase.defaultDirectory(), name: name)
        try self.init(server, path: path, configuration: configuration)
    }

    /// An engine whose outbox is its own file at `path`.
    ///
    /// ```swift
    /// let sync = try GQLSync(server, path: "/tmp/outbox.sqlite")
    /// ```
    public convenience init(_ server: GQLServer, path: String, configuration: Configuration = Configuration()) throws {
        try self.init(server, path: path, key: nil, configuration: configuration)
    }

    /// An engine whose outbox is its own encrypted file at `path` (GQLStore's encryption at rest): queued mutations,
    /// their variables and delivery records never reach the disk in clear.
    ///
    /// ```swift
    /// let sync = try GQLSync(server, path: "/tmp/outbox.sqlite", key: .passphrase("correct horse"))
    /// ```
    /// - Throws: ``GQLError`` `.wrongKey`, `.notEncrypted` or `.corrupt` as `GQLDatabase(path:key:)` does.
    public convenience init(
        _ server: GQLServer, path: String, key: GQLDatabase.Key?, configuration: Configuration = Configuration()
    ) throws {
        // NORMAL for the delivery records; each queued item commits at FULL (OutboxStore.queueLevel).
        var options = GQLDatabase.Configuration()
        options.synchronous = .normal
        let database =
            try key.map { try GQLDatabase(path: path, key: $0, configuration: options) }
            ?? GQLDatabase(path: path, configuration: options)
        try self.init(server, database: database, owns: true, configuration: configuration)
    }

    /// An engine whose outbox lives in the app's database (tables prefixed `_gqlsync_`), so a change and its
    /// mutation can commit together (`in: tx`), and conflicts and pulls can write the app's tables.
    ///
    /// ```swift
    /// let sync = try GQLSync(server, database: db)
    /// ```
    public convenience init(
        _ server: GQLServer, database: GQLDatabase, configuration: Configuration = Configuration()
    ) throws {
        try self.init(server, database: database, owns: false, configuration: configuration)
    }

    private init(_ server: GQLServer, database: GQLDatabase, owns: Bool, configuration: Configuration) throws {
        let name = configuration.name ?? Self.defaultName(server)
        guard !name.isEmpty else { throw GQLError(.invalidArgument, "the sync engine's name is empty") }
        try Self.check(configuration)
        let registration =
            database.path == ":memory:" ? "\(ObjectIdentifier(database))|\(name)" : "\(database.path)|\(name)"
        try Self.register(registration, name: name, path: database.path)
        do {
            self.server = server
            self.database = database
            self.name = name
            self.configuration = configuration
            self.ownsDatabase = owns
            self.registration = registration
            outbox = try OutboxStore(database: database, engine: name, ownsDatabase: owns)
            try outbox.checkIDRoom()
            driver = try DeliveryDriver(
                outbox: outbox, server: server,
                settings: .init(
                    backoff: configuration.backoff, batchSize: configuration.batchSize,
                    maximumAttempts: configuration.maximumAttempts),
                configuration: configuration,
                conflicts: ConflictHandler(
                    resolution: configuration.conflictResolution, store: owns ? nil : database, outbox: outbox,
                    timeout: configuration.conflictTimeout))
        } catch {
            Self.unregister(registration)
            throw error
        }
        let driver = driver
        let delivers = configuration.delivers
        loop = GQLLocked(Task { if delivers { await driver.run() } })
    }

    deinit {
        // An engine dropped without `shutdown()` stops its loop and frees its name.
        if let task = loop.withLock({ $0 }) {
            driver.stop()
            task.cancel()
            Self.unregister(registration)
        }
    }

    /// Stops the engine: the item being sent is abandoned (it is sent again by the next engine on this outbox),
    /// ``drain()`` calls in progress fail with `.closed`, the ``status`` sequences end, and an outbox in its
    /// own file is closed. Calling it again does nothing.
    ///
    /// ```swift
    /// try await sync.shutdown()
    /// ```
    public func shutdown() async throws {
        guard
            let task = loop.withLock({ task -> Task<Void, Never>? in
                defer { task = nil }
                return task
            })
        else { return }
        driver.stop()
        task.cancel()
        await task.value
        outbox.removeJournalIfEmpty()
        driver.statuses.finish()
        Self.unregister(registration)
        if ownsDatabase { try await database.close() }
    }

    /// Refuses settings the delivery loop cannot work with: each would otherwise show only as every item set aside
    /// (a header name HTTP refuses, no attempt allowed) or a loop that retries a failing server without a pause.
    private static func check(_ configuration: Configuration) throws {
        func refuse(_ message: String) -> GQLError { GQLError(.invalidArgument, message, operation: "GQLSync") }
        guard configuration.batchSize >= 1 else {
            throw refuse("batchSize must be at least 1, not \(configuration.batchSize)")
        }
        if let maximum = configuration.maximumAttempts, maximum < 1 {
            throw refuse("maximumAttempts must be at least 1 (or nil, for no limit), not \(maximum)")
        }
        if let header = configuration.idempotencyHeader, header.isEmpty || !header.utf8.allSatisfy(HTTPToken.contains) {
            throw refuse("idempotencyHeader \"\(header)\" is not an HTTP header name (or nil, to send none)")
        }
        if let timeout = configuration.conflictTimeout, timeout <= .zero {
            throw refuse("conflictTimeout must be longer than zero (or nil, for no limit), not \(timeout)")
        }
        let backoff = configuration.backoff
        guard backoff.initialDelay > .zero, backoff.maximumDelay > .zero else {
            throw refuse(
                "the backoff's delays must be longer than zero (initialDelay \(backoff.initialDelay), maximumDelay "
                    + "\(backoff.maximumDelay)): a failing server would be retried without a pause")
        }
    }

    // MARK: Engines side by side

    private static let running = GQLLocked<Set<String>>([])

    private static func register(_ registration: String, name: String, path: String) throws {
        let added = running.withLock { $0.insert(registration).inserted }
        guard added else {
            throw GQLError(
                .invalidArgument,
                "a sync engine named '\(name)' already runs on \(path); two would send the same items",
                operation: "GQLSync")
        }
    }

    private static func unregister(_ registration: String) {
        _ = running.withLock { $0.remove(registration) }
    }

    /// The server's URL without scheme, query or credentials, as a file-name-safe word.
    package static func defaultName(_ server: GQLServer) -> String {
        let url = GQLServer.loggable(server.url ?? server.webSocketURL ?? "server")
        let bare = url.split(separator: "://", maxSplits: 1).last.map(String.init) ?? url
        let safe = bare.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" ? $0 : "-" }
        return String(safe).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
    }
}
