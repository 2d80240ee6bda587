import GQLCore

/// One operation's results on their way from the socket to the caller: a queue bounded by watermarks, in the manner
/// of NIO's `NIOAsyncSequenceProducer`.
///
/// When ``highWatermark`` results wait, `onLagChange(true)` tells the connection to stop reading from the socket;
/// once the caller has taken them down to ``lowWatermark``, `onLagChange(false)` resumes it. The callback runs under
/// this buffer's lock, so the two calls always arrive in order; it must not call back into the buffer.
/// `onTermination` runs once when the caller stops listening (cancels the task, or drops the iterator), not when
/// the buffer finishes.
///
/// ```swift
/// let results = SocketResults(onLagChange: { lagging in … }, onTermination: { … })
/// _ = results.yield(result)           // from the socket's event loop
/// while let result = try await results.next() { … }
/// ```
final class SocketResults: Sendable {
    /// Results that may wait before reading stops; the socket delivers at most one read's worth beyond it.
    static let highWatermark = 32
    /// Results left when reading resumes.
    static let lowWatermark = 8
    /// The most results that may wait once reading went on without this caller (its pause ended so that other
    /// operations on the socket could be read, see ``SocketStateMachine/Settings/maximumSharedPause``): past it the
    /// operation ends with `.responseTooLarge` after the results that wait, and the server is told to stop it.
    /// Far above what a pause lets through (the high watermark and what the event loop had read already: up to
    /// four reads of 64 KiB, some 6,000 of the smallest messages), so only a caller left behind for good meets it.
    static let hardLimit = 16_384

    private struct State {
        var results: [GQLResult] = []
        var head = 0
        /// `nil` while open; then how it ended (an error, or `nil` inside for a normal end).
        var ending: (any Error)??
        /// The caller, while it waits for a result.
        var waiters = GQLWaiters<GQLResult?, any Error>()
        var isLagging = false
        /// The caller stopped listening.
        var isTerminated = false
        /// The owner was told to stop the operation (the caller stopped listening, or fell past the hard limit).
        var ownerTold = false
        /// The most results that waited at once (for the tests' memory bounds).
        var peak = 0

        var count: Int { results.count - head }
    }

    private typealias Resumption = GQLWaiters<GQLResult?, any Error>.Resumption

    private let state = GQLLocked(State())
    private let onLagChange: @Sendable (Bool) -> Void
    private let onTermination: @Sendable () -> Void

    init(onLagChange: @escaping @Sendable (Bool) -> Void, onTermination: @escaping @Sendable () -> Void) {
        self.onLagChange = onLagChange
        self.onTermination = onTermination
    }

    /// How many results wait, and the most that ever did.
    var buffered: (count: Int, peak: Int) { state.withLock { ($0.count, $0.peak) } }

    /// Hands a result to the caller, or queues it.
    func yield(_ result: GQLResult) {
        let (resumption, overflowed) = state.withLock { state -> (Resumption?, Bool) in
            guard state.ending == nil, !state.isTerminated else { return (nil, false) }
            if let resumption = state.waiters.resumeFirst(with: .success(result)) { return (resumption, false) }
            state.results.append(result)
            state.peak = max(state.peak, state.count)
            if !state.isLagging, state.count >= Self.highWatermark {
                state.isLagging = true
                onLagChange(true)
            }
            guard state.count >= Self.hardLimit else { return (nil, false) }
            state.ending = .some(
                GQLError(
                    .responseTooLarge,
                    "the caller fell \(Self.hardLimit) results behind while other operations needed the socket; "
                        + "the operation was stopped"))
            stopLagging(&state)
            defer { state.ownerTold = true }
            return (nil, !state.ownerTold)
        }
        resumption?.run()
        // The caller still gets what waits, then the error; the server is told to stop sending.
        if overflowed { onTermination() }
    }

    /// Ends the results: the caller gets those waiting, then `nil` (or `error`).
    func finish(throwing error: (any Error)? = nil) {
        let resumption = state.withLock { state -> Resumption? in
            guard state.ending == nil else { return nil }
            // Nobody will resume reading for results that are only drained now.
            stopLagging(&state)
            // A waiting caller means no result waits: it gets the end now, and the error only once.
            guard let resumption = state.waiters.resumeFirst(with: error.map { .failure($0) } ?? .success(nil)) else {
                state.ending = .some(error)
                return nil
            }
            state.ending = .some(nil)
            return resumption
        }
        resumption?.run()
    }

    /// The next result, waiting for one; `nil` at the end or when the task was cancelled (the caller stopped
    /// listening, see ``terminate()``).
    func next() async throws -> GQLResult? {
        guard !Task.isCancelled else {
            terminate()
            return nil
        }
        let result = try await state.wait(in: \.waiters, unlessReady: take, whenCancelled: { _ in .success(nil) })
        if result == nil, Task.isCancelled { terminate() }
        return result
    }

    /// The next result or the end, if there is one to take now.
    private func take(_ state: inout State) -> Result<GQLResult?, any Error>? {
        if state.head < state.results.count {
            let result = state.results[state.head]
            state.head += 1
            if state.head > 64, state.head * 2 > state.results.count {
                state.results.removeFirst(state.head)
                state.head = 0
            }
            if state.isLagging, state.count <= Self.lowWatermark { stopLagging(&state) }
            return .success(result)
        }
        if state.isTerminated { return .success(nil) }
        if let ending = state.ending {
            // The error is thrown once; after it, the sequence just ends.
            state.ending = .some(nil)
            return ending.map { .failure($0) } ?? .success(nil)
        }
        return nil
    }

    /// The caller stopped listening: drop what waits, end a waiting `next()`, and tell the owner (once).
    func terminate() {
        let (resumption, first) = state.withLock { state -> (Resumption, Bool) in
            let first = !state.ownerTold
            state.ownerTold = true
            state.isTerminated = true
            state.results.removeAll()
            state.head = 0
            stopLagging(&state)
            return (state.waiters.resumeAll(with: .success(nil)), first)
        }
        resumption.run()
        if first { onTermination() }
    }

    /// Held by the caller's iterator: when the iterator goes away (a loop left with `break`), the caller stopped
    /// listening.
    final class Listener: Sendable {
        let results: SocketResults

        init(_ results: SocketResults) {
            self.results = results
        }

        deinit {
            results.terminate()
        }
    }

    private func stopLagging(_ state: inout State) {
        guard state.isLagging else { return }
        state.isLagging = false
        onLagChange(false)
    }
}
