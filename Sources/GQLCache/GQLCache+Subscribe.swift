import GQLCore
import GQLNet

extension GQLCache {
    /// Runs a subscription on the server's WebSocket and writes each event into the cache (under
    /// `SUBSCRIPTION_ROOT`, every keyed object in its own record), so watchers of any query holding those
    /// objects hear of it; the events come back as results with ``Source/network``.
    ///
    /// ```swift
    /// for try await event in cache.subscribe(server, "OnUpdateUser") {
    ///     print(event.data?["onUpdateUser"]?["name"] ?? .null)   // and every watcher of that user emits
    /// }
    /// ```
    /// Iterating starts the subscription; leaving the loop or cancelling its task stops it. An event with errors
    /// is passed on and not stored; `store: false` stores none.
    /// - Throws (from the iteration): `.invalidArgument` for an operation that is not a subscription;
    ///   `.invalidResponse` naming the path of an event's value that does not fit the selection (the
    ///   subscription then ends); the server's errors, as ``GQLServer/subscription(_:_:)`` throws them.
    public func subscribe(
        _ server: GQLServer, _ operation: String, _ variables: [String: any GQLValueConvertible] = [:],
        store: Bool = true
    ) -> Subscription {
        let given = GQLValues(converting: variables)
        return Subscription(
            cache: self, server: server,
            prepared: Swift.Result { try request(operation, given, .subscription, "subscribe", store: store) })
    }

    /// The events of ``GQLCache/subscribe(_:_:_:store:)``, each already written into the cache.
    public struct Subscription: AsyncSequence, Sendable {
        public typealias Element = GQLCache.Result
        let cache: GQLCache
        let server: GQLServer
        let prepared: Swift.Result<Request, any Error>

        public func makeAsyncIterator() -> Iterator {
            switch prepared {
            case .success(let request):
                Iterator(
                    cache: cache, request: request,
                    base: server.subscription(request.operation.text, request.given.dictionary).makeAsyncIterator())
            case .failure(let error):
                Iterator(cache: cache, request: nil, base: nil, failure: error)
            }
        }

        public struct Iterator: AsyncIteratorProtocol {
            let cache: GQLCache
            let request: Request?
            var base: GQLServer.Subscription.Iterator?
            var failure: (any Error)?

            public mutating func next() async throws -> GQLCache.Result? {
                if let failure {
                    self.failure = nil
                    throw failure
                }
                guard var base, let request else { return nil }
                let next = try await base.next()
                self.base = base
                guard let result = next else {
                    self.base = nil
                    return nil
                }
                if request.store, result.errors.isEmpty, let data = result.data {
                    do {
                        try cache.merge(data, request.operation, request.variables)
                    } catch let error as GQLError where error.code == .recordTooDeep {
                        // Nothing of it was stored; the event is still the caller's, as a fetch's answer is.
                    } catch {
                        self.base = nil
                        throw error
                    }
                }
                return GQLCache.Result(result: result, source: .network)
            }
        }
    }
}
