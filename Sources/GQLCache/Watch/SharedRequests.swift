import GQLCore

/// Requests in flight, shared by the callers that ask for the same one while it runs (watches of one query woken
/// by the same change), as Apollo's query deduplication does: the first caller starts the request, later ones
/// wait for its answer, and every one of them gets it (or its error).
///
/// The request runs in a task of its own, so a caller that is cancelled stops waiting at once without cancelling
/// the request the others wait for; only when every caller has gone is the request cancelled. A caller that comes
/// after the answer starts a new request, and so does one that must have an answer sent after a change it saw: each
/// flight is stamped with a count (the watcher registry's change count when it starts), and a caller that read the
/// count `since` before deciding to ask joins only a flight stamped at or after it; otherwise its new flight takes
/// the older one's place in the table (the older one's callers still get its answer).
///
/// ```swift
/// let requests = SharedRequests<String, Int>()
/// let value = try await requests.value(for: "UserQuery", since: 0, stamp: 0) { try await ask() }
/// ```
final class SharedRequests<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One request in flight and the callers waiting for it.
    private final class Flight: Sendable {
        /// The count when the flight started: it answers callers that ask for one started at or after theirs.
        let stamp: UInt64
        init(stamp: UInt64) { self.stamp = stamp }

        struct State {
            var waiters = GQLWaiters<Value, any Error>()
            var task: Task<Void, Never>?
            /// Every caller went before the task was stored: it is cancelled as soon as it is.
            var abandoned = false
        }
        let state = GQLLocked(State())
    }

    /// The requests in flight. Lock order: this lock, then a flight's (never the other way round).
    private let flights = GQLLocked<[Key: Flight]>([:])

    init() {}

    /// The value of the request in flight for `key` when it is stamped at or after `since`, or of `request`,
    /// started now (stamped `stamp`, a count read no earlier than `since`) when none is.
    ///
    /// - Throws: the request's error; `CancellationError` when the calling task is cancelled while it waits.
    func value(
        for key: Key, since: UInt64, stamp: UInt64, _ request: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let (flight, ticket, isNew) = flights.withLock { flights in
            let known = flights[key].flatMap { $0.stamp >= since ? $0 : nil }
            let flight = known ?? Flight(stamp: max(stamp, since))
            if known == nil { flights[key] = flight }
            return (flight, flight.state.withLock { $0.waiters.add() }, known == nil)
        }
        if isNew { start(flight, key, request) }
        do {
            return try await flight.state.wait(for: ticket, in: \.waiters) { _ in .failure(CancellationError()) }
        } catch {
            if Task.isCancelled { leave(flight, key) }
            throw error
        }
    }

    /// How many callers wait for requests in flight (for tests that must know every caller joined).
    var waiting: Int {
        flights.withLock { flights in flights.values.reduce(0) { $0 + $1.state.withLock { $0.waiters.count } } }
    }

    private func start(_ flight: Flight, _ key: Key, _ request: @escaping @Sendable () async throws -> Value) {
        let task = Task { [flights] in
            let result: Swift.Result<Value, any Error>
            do {
                result = .success(try await request())
            } catch {
                result = .failure(error)
            }
            // Out of the table first, so a caller from now on starts a request of its own; every caller that found
            // this flight holds a ticket already, and gets the answer.
            flights.withLock { if $0[key] === flight { $0[key] = nil } }
            flight.state.withLock { $0.waiters.resumeAll(with: result) }.run()
        }
        let abandoned = flight.state.withLock { state in
            state.task = task
            return state.abandoned
        }
        if abandoned { task.cancel() }
    }

    /// A cancelled caller left `flight`: when no one else waits for it, the request is cancelled.
    private func leave(_ flight: Flight, _ key: Key) {
        let task = flights.withLock { flights -> Task<Void, Never>? in
            flight.state.withLock { state -> Task<Void, Never>? in
                // A flight a newer one replaced in the table still ends when its last caller goes.
                guard state.waiters.isEmpty, !state.abandoned else { return nil }
                if flights[key] === flight { flights[key] = nil }
                state.abandoned = true
                return state.task
            }
        }
        task?.cancel()
    }
}
