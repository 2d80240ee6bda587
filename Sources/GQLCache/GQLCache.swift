import Foundation
import GQLCore
import GQLNet
import GQLStore

/// An offline cache of GraphQL answers, normalized into records in SQLite, that screens read from.
///
/// Every object with a key (`__typename` and `id`, `objectId` or `_id`, or the ``Configuration/keyFields`` of
/// its type) is one record, however many answers it appears in; an answer read from the cache is rebuilt from
/// records, so an update through any query, mutation or manual write shows in every answer that holds it.
///
/// ```swift
/// let cache = try GQLCache(database: db)               // records in the app's database
/// let cache = try GQLCache(path: "cache.sqlite")       // or a file of its own
/// let result = try await cache.fetch(server, "UserQuery", ["id": 1], policy: .cacheFirst)
/// for try await result in cache.watch(server, "UserQuery", ["id": 1], policy: .cacheAndNetwork) { … }
/// try cache.write("UserQuery", ["id": 1], data: ["user": ["__typename": "User", "id": 1, "name": "Ada"]])
/// let data = try cache.read("UserQuery", ["id": 1])
/// try cache.evict(key: "User:1")
/// try cache.clear()                                    // sign-out
/// ```
///
/// Operations are named through ``GQLQuery`` (``Configuration/queries``) or given as text; `__typename` is added
/// to every selection set below the root of what is sent, so every object can be keyed.
public final class GQLCache: Sendable {
    /// The settings the cache was made with.
    public let configuration: Configuration
    /// The database holding the records (the app's, or the cache's own).
    public let database: GQLDatabase

    let store: RecordStore
    let watchers = WatcherRegistry()
    let keys: KeyPolicy
    let matcher: TypeMatcher
    let expiry: FieldExpiry
    /// The network requests of watches in flight, shared by watches that ask for the same answer.
    let requests = SharedRequests<SharedRequest, SharedAnswer>()
    /// Compiled operations by text (or registry name), told apart by their bytes: two texts with a literal argument
    /// in two encodings (`"é"` as U+00E9 and as `e` + U+0301) are two operations (two fields, two texts sent).
    private let operations = GQLLocked<[ExactText: CacheOperation]>([:])

    /// A cache whose records live in `database`, in the table `_gqlcache_records`, created by a migrator of
    /// its own (namespace `gqlcache`), so the app's `PRAGMA user_version` and migrations are left alone.
    ///
    /// ```swift
    /// let db = try GQLDatabase(path: "app.sqlite")
    /// let cache = try GQLCache(database: db, keyFields: ["Post": ["author", "slug"]])
    /// ```
    /// - Parameter keyFields: added to (and replacing entries of) ``Configuration/keyFields``.
    /// - Throws: ``GQLError`` from the migration (`.downgradeAttempt` when the file's cache tables are newer).
    public init(
        database: GQLDatabase, keyFields: [String: [String]] = [:], configuration: Configuration = Configuration()
    ) throws {
        var configuration = configuration
        configuration.keyFields.merge(keyFields) { _, given in given }
        self.configuration = configuration
        self.database = database
        let clock = configuration.clock
        store = try RecordStore(
            database: database, memoryLimit: configuration.memoryLimit, maximumBytes: configuration.maximumBytes,
            clock: { clock().timeIntervalSince1970 })
        keys = KeyPolicy(keyFields: configuration.keyFields, defaultKeyFields: configuration.defaultKeyFields)
        matcher = TypeMatcher(possibleTypes: configuration.possibleTypes)
        expiry = FieldExpiry(configuration)
    }

    /// A cache in a database file of its own at `path` (created, with its directories, when missing).
    ///
    /// ```swift
    /// let cache = try GQLCache(path: "Caches/cache.sqlite")
    /// ```
    public convenience init(
        path: String, keyFields: [String: [String]] = [:], configuration: Configuration = Configuration()
    ) throws {
        try self.init(database: GQLDatabase(path: path), keyFields: keyFields, configuration: configuration)
    }

    /// A cache in an encrypted database file of its own at `path` (GQLStore's encryption at rest): cached answers
    /// never reach the disk in clear.
    ///
    /// ```swift
    /// let cache = try GQLCache(path: "Caches/cache.sqlite", key: .raw(keyData))
    /// ```
    /// - Throws: ``GQLError`` `.wrongKey`, `.notEncrypted` or `.corrupt` as `GQLDatabase(path:key:)` does.
    public convenience init(
        path: String, key: GQLDatabase.Key, keyFields: [String: [String]] = [:],
        configuration: Configuration = Configuration()
    ) throws {
        try self.init(
            database: GQLDatabase(path: path, key: key), keyFields: keyFields, configuration: configuration)
    }

    /// A cache that lives in memory only (`true`: a private in-memory SQLite database that ends with the cache,
    /// for tests and previews), or in `cache.sqlite` in the app-data directory (`false`).
    ///
    /// ```swift
    /// let cache = try GQLCache(inMemory: true)
    /// ```
    public convenience init(
        inMemory: Bool, keyFields: [String: [String]] = [:], configuration: Configuration = Configuration()
    ) throws {
        let database = inMemory ? try GQLDatabase(path: ":memory:") : try GQLDatabase(file: "cache.sqlite")
        try self.init(database: database, keyFields: keyFields, configuration: configuration)
    }

    // MARK: Manual reads and writes

    /// Stores `data` as the answer of an operation (a name in ``Configuration/queries`` or text) with
    /// `variables`, as if the server had sent it; watchers whose answers change hear of it.
    ///
    /// `data` should hold `__typename` where the cache would have asked for it (an object without one is stored
    /// under its parent's path, since its key cannot be told).
    /// ```swift
    /// try cache.write("query User($id: ID!) { user(id: $id) { id name } }", ["id": "1"],
    ///                 data: ["user": ["__typename": "User", "id": "1", "name": "Ada"]])
    /// ```
    /// - Throws: ``GQLError`` `.invalidResponse` naming the path of a value that does not fit the selection;
    ///   `.invalidArgument` for an operation that does not parse or is unknown.
    public func write(
        _ operation: String, _ variables: [String: any GQLValueConvertible] = [:], data: GQLValue
    ) throws {
        let operation = try self.operation(operation)
        try merge(data, operation, operation.variables(GQLValues(converting: variables)))
    }

    /// The answer to an operation built from the cache alone, with the selection's fields in its order.
    ///
    /// ```swift
    /// let data = try cache.read("UserQuery", ["id": "1"])
    /// print(data["user"]?["name"] ?? .null)
    /// ```
    /// - Throws: ``GQLError`` `.cacheMiss` naming the first field (by its path in the answer) that is not cached.
    public func read(_ operation: String, _ variables: [String: any GQLValueConvertible] = [:]) throws -> GQLValue {
        let operation = try self.operation(operation)
        do {
            return try cachedAnswer(operation, operation.variables(GQLValues(converting: variables)), keepsKeys: false)
                .data
        } catch let miss as ReadMiss {
            throw miss.error
        }
    }

    /// The answer to an operation from the cache alone, as a ``Result`` (``Source/cache``, with
    /// ``Result/isStale`` telling whether a field it read is past its ``Configuration/maxAge``).
    ///
    /// ```swift
    /// let cached = try cache.readResult("UserQuery", ["id": "1"])
    /// if cached.isStale { refreshLater() }
    /// ```
    /// - Throws: ``GQLError`` `.cacheMiss` naming the first field (by its path in the answer) that is not cached.
    public func readResult(
        _ operation: String, _ variables: [String: any GQLValueConvertible] = [:]
    ) throws -> Result {
        let operation = try self.operation(operation)
        let given = GQLValues(converting: variables)
        return try cachedResult(
            Request(operation: operation, given: given, variables: operation.variables(given), store: false))
    }

    /// Removes the record `key` (`"User:1"`, see ``key(_:_:)``); answers that held it miss until it is fetched
    /// again. Returns whether there was such a record.
    ///
    /// ```swift
    /// try cache.evict(key: GQLCache.key("User", "1"))
    /// ```
    @discardableResult
    public func evict(key: String) throws -> Bool {
        let key = RecordKey(key)
        let removed = try store.remove([key])
        watchers.notify([key])
        return !removed.isEmpty
    }

    /// Removes every record (at sign-out); every watcher reads again and misses.
    ///
    /// ```swift
    /// try cache.clear()
    /// ```
    public func clear() throws {
        try store.removeAll()
        watchers.notifyAll()
    }

    /// The key of the record of an object of type `typename` whose key field holds `id`: `User:1`. Dots,
    /// commas and backslashes in the id are escaped, as in the stored keys.
    ///
    /// ```swift
    /// try cache.evict(key: GQLCache.key("User", "ada.lovelace"))   // "User:ada\.lovelace"
    /// ```
    public static func key(_ typename: String, _ id: some GQLValueConvertible) -> String {
        CacheKey.object(typename, [id.gqlValue])
    }

    /// The fields of record `key` as stored (references as `{"__ref": key}`), for tools and tests.
    package func record(_ key: String) throws -> GQLValues? {
        try store.load([RecordKey(key)])[RecordKey(key)]
    }

    /// Every record key, in order (for tools and tests).
    package func recordKeys() throws -> [String] { try store.allKeys() }

    /// How many watchers are running (for tests).
    package var watcherCount: Int { watchers.count }

    // MARK: Internals

    /// The compiled operation of a registry name or of operation text.
    func operation(_ nameOrText: String) throws -> CacheOperation {
        let exact = ExactText(nameOrText)
        if let compiled = operations.withLock({ $0[exact] }) { return compiled }
        let text: String
        if configuration.queries.contains(nameOrText) {
            text = try configuration.queries[nameOrText]
        } else if nameOrText.contains("{") {
            text = nameOrText
        } else {
            throw GQLError(
                .invalidArgument,
                "'\(nameOrText)' is neither an operation loaded into the cache's GQLQuery registry nor operation text",
                operation: "cache")
        }
        let compiled = try CacheOperation(text: text)
        operations.withLock { operations in
            if operations.count >= 1_000 { operations.removeAll() }
            operations[exact] = compiled
        }
        return compiled
    }

    /// Normalizes `data` into records, merges them in one transaction and wakes the watchers of what changed.
    func merge(_ data: GQLValue, _ operation: CacheOperation, _ variables: GQLValues) throws {
        watchers.notify(try mergeQuietly(data, operation, variables))
    }

    /// ``merge(_:_:_:)`` without waking the watchers: returns the keys of the records that changed.
    /// `expiresAt` (a server's `Cache-Control`, from the time now: ``CacheControl/Directives/deadline(now:)``)
    /// makes the fields of `data` stale from the time it returns.
    func mergeQuietly(
        _ data: GQLValue, _ operation: CacheOperation, _ variables: GQLValues,
        expiresAt: (_ now: Double) -> Double? = { _ in nil }
    ) throws -> Set<RecordKey> {
        try mergeQuietly(normalize(data, operation, variables), expiresAt: expiresAt)
    }

    /// ``mergeQuietly(_:_:_:expiresAt:)`` of records already normalized.
    func mergeQuietly(_ records: NormalizedRecords, expiresAt: (_ now: Double) -> Double?) throws -> Set<RecordKey> {
        try mergeNotingGeneration(records, expiresAt: expiresAt).changed
    }

    /// ``mergeQuietly(_:expiresAt:)``, and the store's generation with the write in
    /// (``RecordStore/mergeNotingGeneration(_:receivedAt:expiresAt:)``).
    func mergeNotingGeneration(_ records: NormalizedRecords, expiresAt: (_ now: Double) -> Double?) throws
        -> (changed: Set<RecordKey>, generation: UInt64)
    {
        let now = self.now
        let deadline = expiresAt(now)
        guard expiry.isOn || deadline != nil else { return try store.mergeNotingGeneration(records) }
        return try store.mergeNotingGeneration(records, receivedAt: expiry.isOn ? now : nil, expiresAt: deadline)
    }

    /// The records of `data`, the answer of `operation` with `variables`.
    func normalize(_ data: GQLValue, _ operation: CacheOperation, _ variables: GQLValues) throws
        -> NormalizedRecords
    {
        var normalizer = Normalizer(keys: keys, matcher: matcher, variables: variables)
        try normalizer.add(data, selections: operation.selections, rootKey: operation.rootKey)
        return normalizer.records
    }

    /// The configuration's clock, in seconds since 1970.
    var now: Double { configuration.clock().timeIntervalSince1970 }

    /// The answer from records, the keys it read (also when it misses: thrown with them), and how many seconds
    /// past its age its stalest field is (`nil`: fresh). Without `keepsKeys` (a read no watcher waits on) the
    /// keys are not kept: ``CachedAnswer/visited`` and the miss's keys are empty.
    func cachedAnswer(_ operation: CacheOperation, _ variables: GQLValues, keepsKeys: Bool = true) throws
        -> CachedAnswer
    {
        var reader = AnswerReader(matcher: matcher, variables: variables, store: store, keepsKeys: keepsKeys)
        // Always on: a record may hold a server's deadline (`Cache-Control: max-age`) without any configured age.
        let rootTypename =
            switch operation.kind {
            case .query: "Query"
            case .mutation: "Mutation"
            case .subscription: "Subscription"
            }
        reader.expiry = (expiry, now, rootTypename)
        do {
            let data = try reader.read(operation.selections, rootKey: operation.rootKey)
            return CachedAnswer(
                data: data, visited: reader.visited, staleness: reader.staleness, stamp: reader.stamp)
        } catch let error as GQLError where error.code == .cacheMiss {
            throw ReadMiss(error: error, keys: reader.dependencies)
        }
    }
}

/// An answer read from the cache: its data, the keys of the records it read, and how many seconds past its age its
/// stalest field is (`nil`: fresh).
struct CachedAnswer {
    var data: GQLValue
    /// The keys read, in order, repeats included.
    var visited: [RecordKey]
    var staleness: Double?
    /// The change stamp of what the read holds (``AnswerReader/stamp``).
    var stamp: UInt64

    /// The keys read, for a watcher to wait on (made only when asked for: a plain read has no use for them).
    var keys: Set<RecordKey> { Set(visited) }
}

/// A miss with the keys the read looked at, so a watcher can wait for them.
struct ReadMiss: Error {
    var error: GQLError
    var keys: Set<RecordKey>
}
