import GQLCore

/// The delivery loop's decisions, without any I/O: when to read the next items, what each answer means for
/// the item and the queue, how long to back off, whether the engine is online, when the outbox is drained.
///
/// The driver (``DeliveryDriver``) asks ``next(now:)`` what to do, carries it out, and reports back with the
/// time it happened; tests drive it with made-up instants and answers. Items are claimed in call order and the
/// next claim happens only once every claimed item is settled, so nothing overtakes an item being retried.
struct DeliveryStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    struct Settings: Sendable {
        /// Delays between retries of the head item, and between probes while offline.
        var backoff: GQLBackoff
        /// How many items one request may carry (1: one mutation per request).
        var batchSize: Int
        /// Transient failures of one item before it is set aside; `nil`: retried for as long as it takes.
        var maximumAttempts: Int?
    }

    enum Phase: Equatable, Sendable {
        /// Nothing is known to be pending.
        case idle
        /// The driver is reading (claiming) the next items.
        case claiming
        /// These items are with the server.
        case sending([Int64])
        /// Backing off; the head item is retried at `until` (or on ``resume(now:)``).
        case waiting(until: Instant)
        case stopped
    }

    /// What the driver should do next.
    enum Step: Equatable, Sendable {
        /// Settle what the last send decided, and claim up to `limit` items.
        case claim(limit: Int)
        /// Sleep until `until`, unless woken earlier.
        case wait(until: Instant)
        /// Sleep until woken.
        case sleep
        /// End the loop.
        case stop
    }

    /// What to do with one sent item.
    enum Decision: Equatable, Sendable {
        /// Delivered: remove it from the outbox.
        case remove(Int64)
        /// Refused for good: set it aside.
        case setAside(Int64, GQLSync.Failure)
        /// A stale version: hand it to the conflict strategy.
        case conflict(Int64, server: GQLValues?, GQLSync.Failure)
        /// Still pending; it is retried when the backoff ends.
        case keep(Int64)
    }

    /// One sent item and what came of it.
    struct Sent: Sendable {
        var id: Int64
        /// The attempts counted so far, this one included.
        var attempts: Int
        var outcome: DeliveryOutcome
    }

    let settings: Settings
    private(set) var phase = Phase.claiming
    /// Whether the last exchange reached the server. Starts optimistic.
    private(set) var isOnline = true
    /// The delay before the last retry, for the status stream.
    private(set) var lastDelay: Duration?
    /// How many times in a row the server answered that the head item's idempotency key was still in use.
    private var keyInUseStreak = 0
    /// After this many such answers in a row the item is set aside: a server still running the same request for
    /// that long (through as many backoffs) is taken to mean something else by its 409.
    static let keyInUseLimit = 6
    /// A wake arrived while claiming: claim again before calling the outbox drained.
    private var recheck = false
    /// After a transient failure: how many items the retry claims — those kept, and no more, so a batch goes
    /// again as the same items (with the same idempotency key) even when more were queued meanwhile.
    private var retryLimit: Int?
    private var schedule: GQLBackoff.Schedule
    /// How many items a claim takes: the configured batch size, or 1 once the server refused a batch.
    private(set) var batchLimit: Int

    /// A machine that looks for pending items first (left from an earlier run).
    init(settings: Settings, random: @escaping @Sendable () -> Double) {
        self.settings = settings
        self.schedule = settings.backoff.schedule(random: random)
        self.batchLimit = max(settings.batchSize, 1)
    }

    /// The ids with the server right now.
    var inFlight: [Int64] {
        if case .sending(let ids) = phase { return ids }
        return []
    }

    /// How many consecutive failures the backoff has counted.
    var failures: Int { schedule.failures }

    /// What to do at `now`.
    mutating func next(now: Instant) -> Step {
        switch phase {
        case .idle: return .sleep
        case .claiming: return .claim(limit: retryLimit ?? batchLimit)
        case .sending: return .sleep
        case .waiting(let until):
            guard now >= until else { return .wait(until: until) }
            phase = .claiming
            return .claim(limit: retryLimit ?? batchLimit)
        case .stopped: return .stop
        }
    }

    /// Items may have been added (an enqueue committed, an item was put back, someone waits for a drain).
    /// A backoff in progress is not cut short: the head item goes first.
    /// Returns whether the loop sleeps and must be woken (it was idle); otherwise it is running, or waiting out
    /// a backoff, and sees the change on its own.
    @discardableResult
    mutating func wake() -> Bool {
        switch phase {
        case .idle:
            phase = .claiming
            return true
        case .claiming: recheck = true
        case .sending, .waiting, .stopped: break
        }
        return false
    }

    /// The app says the network is back: retry the head item now instead of at the end of the backoff.
    /// Returns whether a wait was cut short.
    @discardableResult
    mutating func resume(now: Instant) -> Bool {
        switch phase {
        case .waiting:
            phase = .claiming
            return true
        case .idle:
            phase = .claiming
            return false
        case .claiming, .sending, .stopped:
            return false
        }
    }

    /// The claim read these items (in call order). Returns `true` when the outbox was found empty: drained.
    mutating func claimed(_ ids: [Int64]) -> Bool {
        guard phase == .claiming else {
            expectStopped(after: "claimed(\(ids))")
            return false
        }
        if !ids.isEmpty {
            phase = .sending(ids)
            return false
        }
        if recheck {
            recheck = false
            return false
        }
        phase = .idle
        return true
    }

    /// The claim failed (the database could not be read), or settling its items did (a conflict's values could not
    /// be written): try again after a backoff, unless one runs already.
    mutating func claimFailed(now: Instant) {
        switch phase {
        case .claiming:
            backOff(now: now, retryAfter: nil)
        case .waiting, .stopped:
            // Settling failed after ``sent(_:now:)`` chose a backoff, or the engine stopped.
            break
        case .idle, .sending:
            // Claims fail in `.claiming`, settling after `sent` left `.sending`; an empty claim (`.idle`) settles
            // nothing.
            assertionFailure("DeliveryStateMachine: claimFailed in phase \(phase)")
        }
    }

    /// The items of the last claim came back with these outcomes, in order. Returns what to do with each.
    ///
    /// A transient failure keeps its item and every item after it pending and starts a backoff; otherwise the
    /// engine claims the next items at once.
    mutating func sent(_ results: [Sent], now: Instant) -> [Decision] {
        guard case .sending = phase else {
            expectStopped(after: "sent(\(results.map(\.id)))")
            return results.map { .keep($0.id) }
        }
        var decisions: [Decision] = []
        var retry: DeliveryOutcome.Transient?
        for result in results {
            if retry != nil {
                decisions.append(.keep(result.id))
                continue
            }
            switch result.outcome {
            case .delivered:
                isOnline = true
                keyInUseStreak = 0
                decisions.append(.remove(result.id))
            case .permanent(let failure):
                isOnline = true
                keyInUseStreak = 0
                decisions.append(.setAside(result.id, failure))
            case .conflict(let server, let failure):
                isOnline = true
                keyInUseStreak = 0
                decisions.append(.conflict(result.id, server: server, failure))
            case .transient(let transient) where transient.keyInUse && keyInUseStreak + 1 >= Self.keyInUseLimit:
                isOnline = true
                keyInUseStreak = 0
                var failure = transient.failure
                failure.message =
                    "gave up after \(Self.keyInUseLimit) answers in a row that the idempotency key is in use: "
                    + failure.message
                decisions.append(.setAside(result.id, failure))
            case .transient(let transient):
                keyInUseStreak = transient.keyInUse ? keyInUseStreak + 1 : 0
                if let maximum = settings.maximumAttempts, result.attempts >= maximum {
                    var failure = transient.failure
                    failure.message = "gave up after \(result.attempts) attempts: \(failure.message)"
                    isOnline = !transient.unreachable
                    decisions.append(.setAside(result.id, failure))
                } else {
                    retry = transient
                    decisions.append(.keep(result.id))
                }
            }
        }
        retryLimit = retry == nil ? nil : decisions.count { if case .keep = $0 { true } else { false } }
        if let retry {
            isOnline = !retry.unreachable
            backOff(now: now, retryAfter: retry.retryAfter)
        } else {
            schedule.reset()
            lastDelay = nil
            phase = .claiming
        }
        return decisions
    }

    /// The server refused a batch as a whole (it does not take JSON arrays): one item per request from now on.
    mutating func refuseBatches() { batchLimit = 1 }

    /// The engine shuts down.
    mutating func stop() {
        phase = .stopped
    }

    /// A claim's or a send's report came in a phase other than the one it was made in. The driver reports each
    /// claim once (made in `.claiming`) and each send once (made in `.sending`), and meanwhile only ``wake()``,
    /// ``resume(now:)`` and ``stop()`` run, of which only `stop` changes those phases: any phase but `.stopped` is
    /// the driver's bug.
    private func expectStopped(after event: @autoclosure () -> String) {
        guard phase != .stopped else { return }
        assertionFailure("DeliveryStateMachine: \(event()) in phase \(phase)")
    }

    private mutating func backOff(now: Instant, retryAfter: Duration?) {
        var delay = schedule.nextDelay()
        if let retryAfter, retryAfter > delay { delay = retryAfter }
        lastDelay = delay
        phase = .waiting(until: now + delay)
    }
}
