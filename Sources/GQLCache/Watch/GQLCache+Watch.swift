import GQLCore
import GQLNet

extension GQLCache {
    /// Watches a query: emits its answer by `policy`, then again each time a record the last answer read
    /// changes — through another query's answer, a mutation's, or a manual ``write(_:_:data:)`` — and never for
    /// an unrelated change or an answer equal to the last one. Cancelling the task that iterates ends the watch.
    ///
    /// ```swift
    /// for try await result in cache.watch(server, "UserQuery", ["id": 1], policy: .cacheAndNetwork) {
    ///     show(result.data)
    /// }
    /// ```
    /// When a change leaves the cache without part of the answer (an ``evict(key:)``, a ``clear()``), a watch
    /// that may use the network fetches the answer again; a ``Policy/cacheOnly`` watch waits for the records to
    /// come back. A server's answer that does not read back (one the byte budget trimmed as it was stored, an
    /// object without its key field) is not asked for again: the watch waits for a change of the app's. A change that leaves the answer holding a field of a `Cache-Control: no-cache` answer is
    /// treated the same way (asked of the server, never emitted from the cache unrevalidated), as
    /// ``fetch(_:_:_:policy:store:maxStale:)`` treats it, unless every record of the answer that changed since
    /// the watch last read holds a server's answer (another watch's or a fetch's): that answer is the
    /// revalidation. A manual write of the answer's fields is the app's own data, not the server's stored answer:
    /// those fields are fresh, and an answer holding nothing else of a `no-cache` answer is emitted from the cache,
    /// unasked. An answer past its max age is emitted flagged ``Result/isStale`` and refreshed from the
    /// network, by the same rule: once per change of the app's that finds it stale, not for a server's answer
    /// (one that says `max-age=0` is stale at once). A failed refetch is not an error of the watch: it waits for
    /// the next change.
    /// A ``Policy/cacheAndNetwork`` watch whose network answer fails after its cached one keeps the cached one and
    /// goes on watching. Watches of the same query and variables that ask the server while one of them waits for
    /// an answer share that request (one request for five watches woken by one change); a watch cancelled
    /// meanwhile does not cancel it for the others.
    /// - Throws (from the iteration): the first answer's errors, as ``fetch(_:_:_:policy:store:maxStale:)`` throws them.
    public func watch(
        _ server: GQLServer, _ operation: String, _ variables: [String: any GQLValueConvertible] = [:],
        policy: Policy = .cacheFirst, store: Bool = true
    ) -> Watch {
        let given = GQLValues(converting: variables)
        return Watch { [self] in
            let prepared = Swift.Result { try self.request(operation, given, .query, "watch", store: store) }
            return Watcher(cache: self, server: server, prepared: prepared, policy: policy).start()
        }
    }

    /// Tests only: called by a watcher after a refetch's answer is stored and before the watcher reads it back, so
    /// a test can change the cache in between. Bound where the iteration starts (the watcher's task inherits it).
    @TaskLocal package static var afterStoringWatchedAnswer: (@Sendable () -> Void)?

    /// Tests only: called by a watcher after it read a refetch's stored answer back and before it labels it, so a
    /// test can change the cache in between. Bound as ``afterStoringWatchedAnswer`` is.
    @TaskLocal package static var afterReadingBackWatchedAnswer: (@Sendable () -> Void)?

    /// The results of ``GQLCache/watch(_:_:_:policy:store:)``: each iteration starts a watcher of its own, which
    /// ends when the iterating task is cancelled or stops iterating.
    public struct Watch: AsyncSequence, Sendable {
        public typealias Element = GQLCache.Result
        let start: @Sendable () -> AsyncThrowingStream<Element, any Error>

        public func makeAsyncIterator() -> Iterator { Iterator(base: start().makeAsyncIterator()) }

        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<Element, any Error>.AsyncIterator

            public mutating func next() async throws -> Element? { try await base.next() }
        }
    }
}

/// One running watch: a task that emits the first answer, then waits to be woken by the registry and reads again.
private struct Watcher: Sendable {
    let cache: GQLCache
    let server: GQLServer
    let prepared: Swift.Result<GQLCache.Request, any Error>
    let policy: GQLCache.Policy

    /// Results kept for a consumer that is slower than the changes: the newest, a few.
    static let buffered = 16

    func start() -> AsyncThrowingStream<GQLCache.Result, any Error> {
        let (stream, output) = AsyncThrowingStream.makeStream(
            of: GQLCache.Result.self, bufferingPolicy: .bufferingNewest(Self.buffered))
        let (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let registry = cache.watchers
        let id = registry.add(waker)
        let task = Task {
            defer { registry.remove(id) }
            do {
                try await run(id: id, wakes: wakes, output: output)
                output.finish()
            } catch {
                output.finish(throwing: GQLCache.isCancellation(error) ? nil : error)
            }
        }
        output.onTermination = { _ in
            task.cancel()
            registry.remove(id)
        }
        return stream
    }

    private func run(
        id: Int, wakes: AsyncStream<Void>, output: AsyncThrowingStream<GQLCache.Result, any Error>.Continuation
    ) async throws {
        let request = try prepared.get()
        // Equal answers are told by data and errors (a network answer's `extensions` do not make it new), but a
        // fresh answer equal to a stale one is news: the refresh that clears the flag. Data are equal only to the
        // byte (a string resent in another Unicode encoding is news, as it is a change to the store).
        var last: (data: GQLValue?, errors: [GQLResult.Error], isStale: Bool)?
        func emit(_ result: GQLCache.Result) {
            if let last, Self.isIdentical(last.data, result.data), last.errors == result.errors,
                result.isStale || !last.isStale
            {
                return
            }
            last = (result.data, result.errors, result.isStale)
            output.yield(result)
        }
        // The first answer, by the policy.
        let start = cache.watchers.changeCount
        switch policy {
        case .cacheOnly:
            emit(try cache.cachedResult(request))
        case .cacheFirst, .cacheAndNetwork:
            if let hit = try cache.cachedResultIfComplete(request) {
                emit(hit)
                if policy == .cacheAndNetwork {
                    // Offline, the cached answer stands and the watch goes on, as `fetch(.cacheAndNetwork)` does.
                    do {
                        emit(try await cache.sharedNetwork(server, request, since: start))
                    } catch let failure where GQLCache.isCancellation(failure) {
                        throw failure
                    } catch {}
                } else if hit.isStale, let fresh = try? await cache.sharedNetwork(server, request, since: start) {
                    emit(fresh)  // A stale first answer is refreshed; offline, the stale one stands.
                }
            } else {
                emit(try await cache.sharedNetwork(server, request, since: start))
            }
        case .networkOnly, .networkFirst:
            do {
                emit(try await cache.sharedNetwork(server, request, since: start))
            } catch let failure where policy == .networkFirst && !GQLCache.isCancellation(failure) {
                guard let hit = try cache.cachedResultIfComplete(request) else { throw failure }
                emit(hit)
            }
        }
        track(id, request, since: start)
        // The notification count taken before the last read (changes after it are news to the watcher), and
        // whether a no-cache answer's refetch failed (what the cache holds of it was not revalidated).
        var readAt = start
        var owesRevalidation = false
        // Then each change that touches what the answer read.
        for await _ in wakes {
            try Task.checkCancellation()
            // How the records the last answer read changed since that read, up to the count taken now, before
            // this read: a change that comes while it reads wakes the watcher again and is judged then.
            let (before, changes) = cache.watchers.wake(id, since: readAt)
            readAt = before
            // A failed refetch is not an error of the watch: it waits for the next change.
            // A stored answer is emitted as the cache reads it back, under the optimistic layers in place: from
            // the network when no record the read holds changed after the answer was stored, from the cache when
            // one did (a write, a removal, an optimistic layer added or removed over it as the answer arrived:
            // the read holds that change too). A change of other records leaves the label alone.
            func refetch() async -> Bool {
                guard let (fetched, storedAt) = try? await cache.sharedNetworkAnswer(server, request, since: before)
                else {
                    return false
                }
                GQLCache.afterStoringWatchedAnswer?()
                if let storedAt, let answer = try? cache.cachedAnswer(request.operation, request.variables) {
                    GQLCache.afterReadingBackWatchedAnswer?()
                    // Only the changes the read may hold: noted after the answer's and by the read's stamp.
                    let changed = cache.store.changed(answer.keys, after: storedAt, upTo: answer.stamp)
                    let source: GQLCache.Source = changed ? .cache : .network
                    emit(GQLCache.Result(result: GQLResult(data: answer.data), source: source))
                } else {
                    emit(fetched)
                }
                track(id, request, since: before)
                return true
            }
            do {
                let answer = try cache.cachedAnswer(request.operation, request.variables)
                cache.watchers.setDependencies(answer.keys, of: id, readSince: before)
                let cached = GQLCache.Result(
                    result: GQLResult(data: answer.data), source: .cache, isStale: answer.staleness != nil)
                guard let staleness = answer.staleness, policy != .cacheOnly else {
                    emit(cached)
                    continue
                }
                // A stale answer is refreshed, and one holding a field of a `no-cache` answer is not served without
                // the server's word (RFC 9111 §4.2.4), as fetch does, unless every record that changed since the
                // last read holds a server's answer (this watcher's own refetch, another watch's, a fetch): that
                // answer is the server's newest word (for no-cache, the revalidation, shared; the records that did
                // not change hold what the watcher emitted, revalidated, last time), and asking again would let two
                // watches of the same records wake each other's requests without end, even when the server says
                // `max-age=0`. A change of the app's (a manual write, a layer) is asked of the server.
                // A second wake for a change the last read saw (a refetch's own write): nothing new.
                if changes == .none, let last, Self.isIdentical(last.data, answer.data) { continue }
                let mustRevalidate = CacheControl.mustBeRevalidated(staleness: staleness)
                if changes == .byServer, !(mustRevalidate && owesRevalidation) {
                    let revalidated = GQLCache.Result(result: cached.result, source: .cache, isStale: false)
                    emit(mustRevalidate ? revalidated : cached)
                    continue
                }
                if !mustRevalidate { emit(cached) }  // Past its max age: emitted flagged, then refreshed.
                let refetched = await refetch()
                if mustRevalidate { owesRevalidation = !refetched }
            } catch let miss as ReadMiss {
                cache.watchers.setDependencies(miss.keys, of: id, readSince: before)
                // Asked of the server only for a change of the app's (an eviction, a clear, a write): a server's
                // answer that does not read back (a keyed object without its key field, an answer the size
                // budget trimmed at once) would otherwise wake the refetch that stored it again, without end.
                guard policy != .cacheOnly, changes == .other else { continue }
                _ = await refetch()
            }
        }
    }

    /// Whether two answers' data are the same to the byte (``StoredValue/isIdentical(_:_:)``).
    private static func isIdentical(_ a: GQLValue?, _ b: GQLValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): StoredValue.isIdentical(a, b)
        default: false
        }
    }

    /// Reads the answer's dependencies from the cache after a network answer (or the first read) and registers
    /// them; a change since `count` wakes the watcher again.
    private func track(_ id: Int, _ request: GQLCache.Request, since count: UInt64) {
        let keys: Set<RecordKey>
        do {
            keys = try cache.cachedAnswer(request.operation, request.variables).keys
        } catch let miss as ReadMiss {
            keys = miss.keys
        } catch {
            keys = []
        }
        cache.watchers.setDependencies(keys, of: id, readSince: count)
    }
}
