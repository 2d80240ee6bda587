/// Tasks suspended until a value is handed to them, kept in the state behind a ``GQLLocked`` so that "is there
/// something to take, or must I wait?" and "is someone waiting, or must I keep it?" are decided under one lock.
///
/// A wait has two steps. Under the lock, the waiter checks the state and, finding nothing to take, ``add()``s a
/// ticket; outside it, ``GQLLocked/wait(for:in:whenCancelled:)`` suspends on that ticket. A value handed over in
/// between (``resume(_:with:)``, ``resumeFirst(with:)``, ``resumeAll(with:)``) is kept for the ticket and returned
/// at once, so no hand-over is lost. Cancelling the waiting task ends the wait with what `whenCancelled` decides.
/// Whichever comes first, a value or the cancellation, resumes the task, exactly once.
///
/// The `resume` methods run under the lock and return a ``Resumption``: run it once the lock is released, so a
/// woken task does not contend for a lock its waker still holds.
///
/// ```swift
/// struct State { var items: [String] = []; var waiters = GQLWaiters<String, Never>() }
/// let state = GQLLocked(State())
///
/// // Producer: hand the item to a waiter, or keep it.
/// state.withLock { state in
///     if let resumption = state.waiters.resumeFirst(with: .success(item)) { return resumption }
///     state.items.append(item)
///     return nil
/// }?.run()
///
/// // Consumer: take an item, or wait for one ("" when cancelled).
/// let item = await state.wait(in: \.waiters, unlessReady: { state in
///     state.items.isEmpty ? nil : .success(state.items.removeFirst())
/// }, whenCancelled: { _ in .success("") })
/// ```
///
/// Made for a handful of waiters at a time (tickets are kept in an array, searched from the front); the waits are
/// resumed first come, first served by ``resumeFirst(with:)``.
package struct GQLWaiters<Value: Sendable, Failure: Error>: Sendable {
    /// One wait's place, from ``add()`` until the wait returned.
    package struct Ticket: Hashable, Sendable {
        fileprivate let id: Int
    }

    @usableFromInline typealias Continuation = CheckedContinuation<Result<Value, Failure>, Never>

    private enum Slot: Sendable {
        /// Added; the task has not suspended yet.
        case added
        /// The task is suspended here.
        case suspended(Continuation)
        /// A value came before the task suspended; it returns at once.
        case resumed(Result<Value, Failure>)
    }

    private var tickets: [(id: Int, slot: Slot)] = []
    private var lastID = 0

    package init() {}

    /// How many waits have not been handed a value yet (the tasks suspended, and those about to).
    package var count: Int {
        tickets.reduce(0) { count, ticket in
            if case .resumed = ticket.slot { return count }
            return count + 1
        }
    }

    /// Whether no wait is waiting for a value.
    package var isEmpty: Bool { count == 0 }

    /// How many tasks are suspended (for tests that must know a wait began).
    package var suspendedCount: Int {
        tickets.reduce(0) { count, ticket in
            if case .suspended = ticket.slot { return count + 1 }
            return count
        }
    }

    /// A new wait; pass the ticket to ``GQLLocked/wait(for:in:whenCancelled:)``, which must follow.
    package mutating func add() -> Ticket {
        lastID &+= 1
        tickets.append((lastID, .added))
        return Ticket(id: lastID)
    }

    /// Hands `result` to the wait of `ticket`; `nil` when it had a value already, was cancelled, or returned.
    package mutating func resume(_ ticket: Ticket, with result: Result<Value, Failure>) -> Resumption? {
        guard let index = tickets.firstIndex(where: { $0.id == ticket.id }) else { return nil }
        return resume(at: index, with: result)
    }

    /// Hands `result` to the longest-waiting wait; `nil` when none waits.
    package mutating func resumeFirst(with result: Result<Value, Failure>) -> Resumption? {
        guard let index = tickets.firstIndex(where: { if case .resumed = $0.slot { false } else { true } }) else {
            return nil
        }
        return resume(at: index, with: result)
    }

    /// Hands `result` to every wait that has no value yet.
    package mutating func resumeAll(with result: Result<Value, Failure>) -> Resumption {
        var continuations: [Continuation] = []
        for index in tickets.indices {
            switch tickets[index].slot {
            case .added: tickets[index].slot = .resumed(result)
            case .suspended(let continuation): continuations.append(continuation)
            case .resumed: break
            }
        }
        tickets.removeAll { if case .suspended = $0.slot { true } else { false } }
        return continuations.isEmpty ? Resumption(.none) : Resumption(.many(continuations, result))
    }

    private mutating func resume(at index: Int, with result: Result<Value, Failure>) -> Resumption? {
        switch tickets[index].slot {
        case .added:
            tickets[index].slot = .resumed(result)
            return Resumption(.none)
        case .suspended(let continuation):
            tickets.remove(at: index)
            return Resumption(.one(continuation, result))
        case .resumed:
            return nil
        }
    }

    /// Suspends the wait of `ticket` on `continuation`; what to resume it with at once instead, if the wait is over
    /// already (a value came, or the task was cancelled: `nil` inside).
    fileprivate mutating func suspend(_ ticket: Ticket, on continuation: Continuation) -> Result<Value, Failure>?? {
        guard let index = tickets.firstIndex(where: { $0.id == ticket.id }) else {
            assertionFailure("GQLWaiters: a wait on ticket \(ticket.id), which is not waiting (waited on twice?)")
            return .some(nil)
        }
        switch tickets[index].slot {
        case .added:
            if Task.isCancelled {
                tickets.remove(at: index)
                return .some(nil)
            }
            tickets[index].slot = .suspended(continuation)
            return nil
        case .suspended:
            assertionFailure("GQLWaiters: a second wait on ticket \(ticket.id)")
            return .some(nil)
        case .resumed(let result):
            tickets.remove(at: index)
            return .some(result)
        }
    }

    /// Ends the wait of `ticket` for a cancellation: its continuation, if it is suspended. A wait not suspended yet
    /// sees the cancellation itself when it suspends; one that has a value keeps it.
    fileprivate mutating func cancel(_ ticket: Ticket) -> Continuation? {
        guard let index = tickets.firstIndex(where: { $0.id == ticket.id }),
            case .suspended(let continuation) = tickets[index].slot
        else { return nil }
        tickets.remove(at: index)
        return continuation
    }

    /// What a wait found under the lock: a value to return, or a ticket to wait on.
    fileprivate enum Start {
        case ready(Result<Value, Failure>)
        case wait(Ticket)
    }

    /// Tasks to resume, taken from the waiters under the lock; ``run()`` resumes them once it is released.
    package struct Resumption: Sendable {
        fileprivate enum Kind: Sendable {
            case none
            case one(Continuation, Result<Value, Failure>)
            case many([Continuation], Result<Value, Failure>)
        }

        private let kind: Kind

        fileprivate init(_ kind: Kind) { self.kind = kind }

        /// Resumes the tasks (call it once, outside the lock).
        package func run() {
            switch kind {
            case .none:
                break
            case .one(let continuation, let result):
                continuation.resume(returning: result)
            case .many(let continuations, let result):
                for continuation in continuations { continuation.resume(returning: result) }
            }
        }
    }
}

extension GQLLocked {
    /// Suspends until the wait of `ticket` (added under this lock to the waiters at `waiters`) is handed a value,
    /// or the task is cancelled: then `whenCancelled` decides the outcome, under the lock. Returns at once when a
    /// value came, or the task was cancelled, before it suspended.
    ///
    /// ```swift
    /// let ticket = state.withLock { $0.waiters.add() }
    /// let value = try await state.wait(for: ticket, in: \.waiters) { _ in .failure(CancellationError()) }
    /// ```
    package func wait<Value, Failure>(
        for ticket: GQLWaiters<Value, Failure>.Ticket,
        in waiters: WritableKeyPath<State, GQLWaiters<Value, Failure>> & Sendable,
        whenCancelled: @Sendable (inout State) -> Result<Value, Failure>
    ) async throws(Failure) -> Value {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: GQLWaiters<Value, Failure>.Continuation) in
                let now = withLock { state -> Result<Value, Failure>? in
                    switch state[keyPath: waiters].suspend(ticket, on: continuation) {
                    case nil: return nil
                    case .some(nil): return whenCancelled(&state)
                    case .some(.some(let result)): return result
                    }
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let cancelled = withLock { state -> (GQLWaiters<Value, Failure>.Continuation, Result<Value, Failure>)? in
                guard let continuation = state[keyPath: waiters].cancel(ticket) else { return nil }
                return (continuation, whenCancelled(&state))
            }
            if let (continuation, result) = cancelled { continuation.resume(returning: result) }
        }
        return try result.get()
    }

    /// Takes what `ready` finds under the lock, or else waits for a value handed to the waiters at `waiters`, as
    /// ``wait(for:in:whenCancelled:)`` does. `ready` returns `nil` when there is nothing to take.
    ///
    /// ```swift
    /// let item = await state.wait(in: \.waiters, unlessReady: { state in
    ///     state.items.isEmpty ? nil : .success(state.items.removeFirst())
    /// }, whenCancelled: { _ in .success(nil) })
    /// ```
    package func wait<Value, Failure>(
        in waiters: WritableKeyPath<State, GQLWaiters<Value, Failure>> & Sendable,
        unlessReady ready: (inout State) -> Result<Value, Failure>?,
        whenCancelled: @Sendable (inout State) -> Result<Value, Failure>
    ) async throws(Failure) -> Value {
        let start = withLock { state -> GQLWaiters<Value, Failure>.Start in
            if let result = ready(&state) { return .ready(result) }
            return .wait(state[keyPath: waiters].add())
        }
        switch start {
        case .ready(let result): return try result.get()
        case .wait(let ticket): return try await wait(for: ticket, in: waiters, whenCancelled: whenCancelled)
        }
    }
}
