import GQLCore
import GQLNet

extension GQLSync {
    /// A running live sync (see ``GQLSync/live(_:subscriptions:query:variables:into:)``): its events, and
    /// ``stop()``.
    public final class Live: Sendable {
        /// What a live sync did, in order.
        public enum Event: Sendable {
            /// A subscription event was written (or kept out, see ``PullReport/kept``) to the store.
            case applied(field: String, written: Int, deleted: Int, kept: Int)
            /// The WebSocket connected and the gap-filling delta pull finished.
            case pulled(PullReport)
            /// An event or a pull failed; live sync goes on (the next connection pulls again). Also a subscription
            /// the server ended (``GQLError`` `.closed` naming it): its events no longer arrive.
            case failed(any Error)
        }

        /// The live sync's events as they happen; meant for one reader (the newest 1,000 are kept for it).
        ///
        /// ```swift
        /// for await event in live.events {
        ///     if case .pulled(let report) = event { print("caught up: \(report.written) rows") }
        /// }
        /// ```
        public let events: AsyncStream<Event>
        private let continuation: AsyncStream<Event>.Continuation
        private let task: GQLLocked<Task<Void, Never>?>
        /// The events held while a pull runs (tests read whether it holds).
        let hold: LiveHold

        /// `subscriptions`: each subscription's name and text; `holdLimit`: the most events held while a pull runs.
        init(
            server: GQLServer, subscriptions: [(name: String, text: String)], writer: LiveWriter, pull: PullRunner?,
            holdLimit: Int
        ) {
            let (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(1_000))
            self.events = events
            self.continuation = continuation
            let hold = LiveHold(limit: holdLimit)
            self.hold = hold
            task = GQLLocked(
                Task {
                    await withTaskGroup(of: Void.self) { group in
                        // Each subscription says when it started (its `subscribe` is queued on the socket): the pull
                        // waits for all of them, so that the server has them before its read.
                        let (started, subscribed) = AsyncStream<Void>.makeStream()
                        for (name, text) in subscriptions {
                            group.addTask {
                                do {
                                    var results = server.subscription(text).makeAsyncIterator()
                                    subscribed.yield()
                                    while let result = try await results.next() {
                                        if hold.hold(result) { continue }
                                        await Self.write(result, writer, continuation)
                                    }
                                    // The server completed it: no event of it reaches the store any more. Said,
                                    // not subscribed again (a server that ends every subscription at once would
                                    // be asked in a loop).
                                    if !Task.isCancelled {
                                        continuation.yield(
                                            .failed(
                                                GQLError(
                                                    .closed,
                                                    "the server ended the subscription \(name): its events no longer "
                                                        + "reach the store (stop this live sync and start another)",
                                                    operation: name)))
                                    }
                                } catch {
                                    if !Task.isCancelled { continuation.yield(.failed(error)) }
                                }
                            }
                        }
                        if let pull {
                            group.addTask {
                                var count = 0
                                for await _ in started {
                                    count += 1
                                    if count == subscriptions.count { break }
                                }
                                for await state in server.connectionStates where state == .connected {
                                    await Self.catchUp(server, pull, hold, writer, continuation)
                                    if Task.isCancelled { return }
                                }
                            }
                        }
                    }
                    continuation.finish()
                })
        }

        /// Fills the gap after a connection: waits until the server started the subscriptions (events are held
        /// from then on), runs the delta pull, then writes the events held meanwhile.
        ///
        /// When events were held (or more than the hold keeps arrived), the pull reads once more what it read,
        /// still holding: a held event may be older than a pulled row (a later change brought no event the app
        /// hears, or two subscriptions' events were held out of the socket's order), and a delete leaves no
        /// `_version` to compare with. At most two pulls: under steady traffic the second one's events are
        /// written after it as they are.
        private static func catchUp(
            _ server: GQLServer, _ pull: PullRunner, _ hold: LiveHold, _ writer: LiveWriter,
            _ continuation: AsyncStream<Event>.Continuation
        ) async {
            hold.begin()
            do {
                try await server.subscriptionsStarted()
            } catch {
                // Not known to be started (a timeout, the socket lost meanwhile): pull anyway; the next connection
                // pulls again.
                if !Task.isCancelled { continuation.yield(.failed(error)) }
            }
            let earlier = try? pull.outbox.cursor(pull.query, variables: pull.cursorVariables)
            var pulls = 0
            repeat {
                if Task.isCancelled { return }
                do {
                    let report = try await pull.run(
                        forceBase: pulls > 0 && earlier == nil, from: earlier, progress: nil)
                    continuation.yield(.pulled(report))
                } catch {
                    if !Task.isCancelled { continuation.yield(.failed(error)) }
                }
                pulls += 1
                for result in hold.drain() {
                    // Not after stop(): a held event is not written once the live sync is stopped.
                    if Task.isCancelled { return }
                    await write(result, writer, continuation)
                }
            } while pulls < 2 && hold.needsAnotherPull()
            while true {
                let held = hold.take()
                if held.isEmpty { return }
                for result in held {
                    if Task.isCancelled { return }
                    await write(result, writer, continuation)
                }
            }
        }

        /// Writes one subscription event and says what it did.
        private static func write(
            _ result: GQLResult, _ writer: LiveWriter, _ continuation: AsyncStream<Event>.Continuation
        ) async {
            do {
                let (field, tally) = try await writer.apply(result)
                continuation.yield(
                    .applied(field: field, written: tally.written, deleted: tally.deleted, kept: tally.kept))
            } catch {
                continuation.yield(.failed(error))
            }
        }

        deinit {
            task.withLock { $0?.cancel() }
        }

        /// Stops the subscriptions and any pull in progress; ``events`` ends. Calling it again does nothing.
        ///
        /// ```swift
        /// await live.stop()
        /// ```
        public func stop() async {
            guard
                let task = task.withLock({ task -> Task<Void, Never>? in
                    defer { task = nil }
                    return task
                })
            else { return }
            task.cancel()
            await task.value
            continuation.finish()
        }
    }
}
