import GQLCore
import GQLNet

extension GQLCache {
    /// Answers a query from the cache, the network or both, by `policy`; answers from the network are stored
    /// (unless `store` is `false`, the answer has errors, or its HTTP answer says `Cache-Control: no-store`).
    ///
    /// ```swift
    /// let result = try await cache.fetch(server, "UserQuery", ["id": 1], policy: .cacheFirst)
    /// let offline = try await cache.fetch(server, "UserQuery", ["id": 1], policy: .networkFirst)
    /// print(offline.source)           // .cache when the server could not be reached
    /// ```
    /// A cached answer holding a field past its ``Configuration/maxAge`` is stale. Under
    /// ``Policy/cacheFirst`` a stale answer no more than `maxStale` past its age is returned with
    /// ``Result/isStale`` and refreshed from the network in the background; one further past is a miss that
    /// goes to the network, and is returned (stale) only when the network fails. ``Policy/cacheAndNetwork``,
    /// ``Policy/cacheOnly`` and the fallback of ``Policy/networkFirst`` return a stale answer with the flag set.
    /// An answer holding a field of a `Cache-Control: no-cache` answer is a miss for every policy but
    /// ``Policy/cacheOnly``, even when the network fails (RFC 9111 §4.2.4: it is never served unrevalidated).
    /// - Parameters:
    ///   - operation: a query's name in ``Configuration/queries``, or its text.
    ///   - variables: plain Swift values, as ``GQLServer/query(_:_:headers:)`` takes them.
    ///   - maxStale: how far past its age a cached answer may be and still be returned first under
    ///     ``Policy/cacheFirst`` (zero: every stale answer waits for the network). A field is fresh only while
    ///     its age is below its max age, so an answer with `Cache-Control: max-age=0` is stale at once.
    /// - Throws: ``GQLError`` `.cacheMiss` under ``Policy/cacheOnly`` naming the first missing field; the
    ///   server's transport errors when the network was needed (and, under ``Policy/networkFirst``, the cache
    ///   could not answer either); `.invalidArgument` for an operation that is not a query.
    public func fetch(
        _ server: GQLServer, _ operation: String, _ variables: [String: any GQLValueConvertible] = [:],
        policy: Policy = .cacheFirst, store: Bool = true, maxStale: Duration = .zero
    ) async throws -> Result {
        let request = try self.request(operation, GQLValues(converting: variables), .query, "fetch", store: store)
        switch policy {
        case .cacheOnly:
            return try cachedResult(request)
        case .cacheFirst:
            guard let (hit, staleness) = try cachedHit(request) else { return try await network(server, request) }
            guard let staleness else { return hit }
            // A stale answer comes first only within a positive maxStale: with zero, even one stale by 0 s (a
            // `max-age=0` answer read at once) waits for the network.
            if maxStale > .zero, staleness <= maxStale.seconds {
                Task { _ = try? await self.network(server, request) }
                return hit
            }
            do {
                return try await network(server, request)
            } catch let failure where !Self.isCancellation(failure) {
                return hit
            }
        case .networkOnly:
            return try await network(server, request)
        case .networkFirst:
            do {
                return try await network(server, request)
            } catch let failure where !Self.isCancellation(failure) {
                if let hit = try? cachedResultIfComplete(request) { return hit }
                throw failure
            }
        case .cacheAndNetwork:
            guard let hit = try cachedResultIfComplete(request) else { return try await network(server, request) }
            Task { _ = try? await self.network(server, request) }
            return hit
        }
    }

    /// ``fetch(_:_:_:policy:store:maxStale:)``, decoding the value at a dotted key path of the answer's data as
    /// ``GQLServer/query(_:_:_:at:headers:)`` does.
    ///
    /// ```swift
    /// struct Note: Decodable { var title: String }
    /// let note = try await cache.fetch(Note.self, server, "GetNote", ["id": "1"], at: "getNote", policy: .cacheFirst)
    /// ```
    /// - Throws: what ``fetch(_:_:_:policy:store:maxStale:)`` throws; ``GQLResult/Failure`` (the GraphQL errors,
    ///   with the partial data) when the answer has errors; ``GQLError`` `.notFound` when the path leads nowhere,
    ///   `.decoding` when the value does not fit `T`.
    public func fetch<T: Decodable>(
        _ type: T.Type, _ server: GQLServer, _ operation: String, _ variables: [String: any GQLValueConvertible] = [:],
        at path: String, policy: Policy = .cacheFirst, store: Bool = true, maxStale: Duration = .zero
    ) async throws -> T {
        let answer = try await fetch(server, operation, variables, policy: policy, store: store, maxStale: maxStale)
        return try GQLServer.decode(type, at: path, from: answer.result)
    }

    /// Runs a mutation on the server and stores its answer (under `MUTATION_ROOT`, every keyed object in its
    /// own record), so watchers of any query holding those objects hear of the change.
    ///
    /// With `optimistic`, the answer the app expects is laid over the cache at once (an optimistic layer, see
    /// ``addOptimisticLayer(_:_:data:)``): watchers see it before the server answers. The server's answer then
    /// replaces it (one change for the watchers); when the mutation fails — the server is down, refuses it with
    /// errors, or the task is cancelled — the layer is removed and watchers see the data as it was.
    ///
    /// ```swift
    /// let renamed = try await cache.mutate(
    ///     server, "UpdateUser", ["input": ["id": "1", "name": "Ada"]],
    ///     optimistic: ["updateUser": ["__typename": "User", "id": "1", "name": "Ada"]])
    /// ```
    /// - Throws: the server's transport errors (the layer is gone by then); `.invalidArgument` for an operation
    ///   that is not a mutation; `.invalidResponse` when `optimistic` does not fit the selection.
    public func mutate(
        _ server: GQLServer, _ operation: String, _ variables: [String: any GQLValueConvertible] = [:],
        optimistic: GQLValue? = nil, store: Bool = true
    ) async throws -> Result {
        let request = try request(operation, GQLValues(converting: variables), .mutation, "mutate", store: store)
        guard let optimistic else { return try await network(server, request) }
        let layer = try addLayer(request, data: optimistic)
        do {
            return try await network(server, request, replacing: layer)
        } catch {
            removeOptimisticLayer(layer)
            throw error
        }
    }

    // MARK: Internals

    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? GQLError)?.code == .cancelled || Task.isCancelled
    }

    /// One operation with its variables: as the caller gave them (sent) and with the operation's defaults (used
    /// for field keys).
    struct Request: Sendable {
        var operation: CacheOperation
        var given: GQLValues
        var variables: GQLValues
        var store: Bool
    }

    /// The request of an operation (a registry name or text) that must be of `kind`; `verb` names the caller in
    /// the error.
    func request(
        _ nameOrText: String, _ given: GQLValues, _ kind: CacheOperation.Kind, _ verb: String, store: Bool
    ) throws -> Request {
        let operation = try self.operation(nameOrText)
        guard operation.kind == kind else {
            throw GQLError(
                .invalidArgument,
                "\(verb) takes a \(kind.rawValue); this operation is a \(operation.kind.rawValue)", operation: "cache")
        }
        return Request(operation: operation, given: given, variables: operation.variables(given), store: store)
    }

    /// The cache's answer (stale or not), or the miss.
    func cachedResult(_ request: Request) throws -> Result {
        do {
            return try cachedHitOrMiss(request).result
        } catch let miss as ReadMiss {
            throw miss.error
        }
    }

    /// The cache's answer, or `nil` when it misses a field or must revalidate one (other failures, such as a
    /// closed database, throw).
    func cachedResultIfComplete(_ request: Request) throws -> Result? {
        try cachedHit(request)?.result
    }

    /// The cached answer ``Policy/cacheAndNetwork`` returns first (to gql-cli, which prints it before it asks
    /// the network): `nil` on a miss and for an answer holding a field of a `no-cache` answer.
    package func cachedResultIfComplete(
        _ operation: String, _ variables: [String: any GQLValueConvertible] = [:]
    ) throws -> Result? {
        try cachedResultIfComplete(request(operation, GQLValues(converting: variables), .query, "fetch", store: false))
    }

    /// The cache's answer with how many seconds past its age it is (`nil`: fresh), or `nil` on a miss. An answer
    /// holding a field of a `no-cache` answer is a miss too: it must not be served without the server's word
    /// (RFC 9111 §4.2.4), so only ``cachedResult(_:)`` (`cacheOnly`, which asks no server) returns it.
    func cachedHit(_ request: Request) throws -> (result: Result, staleness: Double?)? {
        do {
            let hit = try cachedHitOrMiss(request)
            if let staleness = hit.staleness, CacheControl.mustBeRevalidated(staleness: staleness) { return nil }
            return hit
        } catch is ReadMiss {
            return nil
        }
    }

    private func cachedHitOrMiss(_ request: Request) throws -> (result: Result, staleness: Double?) {
        let answer = try cachedAnswer(request.operation, request.variables, keepsKeys: false)
        let result = Result(result: GQLResult(data: answer.data), source: .cache, isStale: answer.staleness != nil)
        return (result, answer.staleness)
    }

    /// The server's answer, stored when it has data and no errors (and the request stores).
    ///
    /// With `layer`, the optimistic layer is removed once the answer is stored (or refused), and the watchers of
    /// both hear one change.
    ///
    /// An HTTP answer's `Cache-Control: max-age` less its age (`Age`, or the apparent age from `Date` when
    /// larger; read through ``GQLServer/answerHeaders``) sets how long the fields it brings stay fresh, over the
    /// configuration's ages; `no-cache` stores them stale at once (revalidated before every use, see
    /// ``CacheControl``); `no-store` keeps the answer out of the cache (returned, not written: watchers hear
    /// nothing but the layer's removal), and so does an answer nested too deep to store (`.recordTooDeep`).
    func network(_ server: GQLServer, _ request: Request, replacing layer: Layer? = nil) async throws -> Result {
        try await networkAnswer(server, request, replacing: layer).result
    }

    /// ``network(_:_:replacing:)`` of a query, shared with every other watch that asks for the same one while it
    /// is in flight (see ``sharedNetworkAnswer(_:_:)``).
    func sharedNetwork(_ server: GQLServer, _ request: Request, since: UInt64) async throws -> Result {
        try await sharedNetworkAnswer(server, request, since: since).result
    }

    /// ``networkAnswer(_:_:replacing:)`` of a query, shared: watches of the same operation with the same variables
    /// (and the same server and storing) that ask while a request is in flight wait for its answer instead of
    /// sending their own, as Apollo deduplicates queries. One cancelled watch stops waiting without cancelling the
    /// request the others wait for. A watch joins only a request sent after the change count `since` it read
    /// before deciding to ask (one sent earlier may hold what that change replaced): otherwise it sends its own.
    func sharedNetworkAnswer(
        _ server: GQLServer, _ request: Request, since: UInt64
    ) async throws -> (result: Result, storedAt: UInt64?) {
        let key = SharedRequest(
            server: ObjectIdentifier(server), text: ExactText(request.operation.text),
            variables: CanonicalJSON.text(.object(request.given)),
            store: request.store)
        let answer = try await requests.value(for: key, since: since, stamp: watchers.changeCount) { [self] in
            let (result, storedAt) = try await networkAnswer(server, request)
            return SharedAnswer(result: result, storedAt: storedAt)
        }
        return (answer.result, answer.storedAt)
    }

    /// What tells two requests that can share one answer apart. The server is told by identity: the request in
    /// flight holds it, so no other server can take its identifier meanwhile. The text is told by its bytes and the
    /// variables by their canonical JSON (``CanonicalJSON``, ASCII), not as Strings and values, which compare by
    /// canonical equivalence: `"é"` as U+00E9 and as `e` + U+0301 are two requests to a server.
    struct SharedRequest: Hashable, Sendable {
        var server: ObjectIdentifier
        var text: ExactText
        var variables: String
        var store: Bool
    }

    /// A shared request's answer, and the change stamp it was stored with (`nil`: not stored).
    struct SharedAnswer: Sendable {
        var result: Result
        var storedAt: UInt64?
    }

    /// How many watches wait for a shared request's answer (for tests that must know every watch joined it).
    package var sharedRequestWaiters: Int { requests.waiting }

    /// ``network(_:_:replacing:)``, with the change stamp the answer was stored with (`nil`: it was not; see
    /// ``RecordStore/changed(_:after:upTo:)``).
    func networkAnswer(
        _ server: GQLServer, _ request: Request, replacing layer: Layer? = nil
    ) async throws -> (result: Result, storedAt: UInt64?) {
        let directives = GQLLocked(CacheControl.Directives())
        let observe: @Sendable ([(name: String, value: String)]) -> Void = { [self] fields in
            let read = CacheControl.directives(of: fields, now: now)
            directives.withLock { $0 = read }
        }
        let result = try await GQLServer.$answerHeaders.withValue(observe) {
            request.operation.kind == .mutation
                ? try await server.mutation(request.operation.text, request.given.dictionary)
                : try await server.query(request.operation.text, request.given.dictionary)
        }
        var changed: Set<RecordKey> = []
        var written: Set<RecordKey> = []
        var storedAt: UInt64?
        let said = directives.withLock { $0 }
        if request.store, !said.noStore, result.errors.isEmpty, let data = result.data {
            do {
                let records = try normalize(data, request.operation, request.variables)
                let merged = try mergeNotingGeneration(records, expiresAt: said.deadline(now:))
                changed = merged.changed
                // What the size budget evicted to make room counts as this answer's change too (not the app's).
                written = changed.union(records.lazy.map(\.key))
                storedAt = merged.generation
            } catch let error as GQLError where error.code == .recordTooDeep {
                // Nothing of it was stored (the write rolled back); the server's answer is still the caller's.
            }
        }
        if let layer { changed.formUnion(store.removeLayer(layer.id)) }
        watchers.notify(changed, fromServer: written)
        return (Result(result: result, source: .network), storedAt)
    }
}
