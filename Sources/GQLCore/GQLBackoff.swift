/// Capped, jittered exponential delays between retries: one rule for every layer that retries (the WebSocket's
/// reconnect, the sync engine's deliveries, the service clients' requests).
///
/// Attempt *n* (1-based) has the ceiling `min(maximumDelay, initialDelay × multiplierⁿ⁻¹)`; with `jitter` *j*,
/// the delay is drawn uniformly between `(1 − j) × ceiling` and `ceiling`, so clients that failed together do not
/// come back in step. `jitter` 0 gives the ceilings themselves.
///
/// ```swift
/// let backoff = GQLBackoff(initialDelay: .milliseconds(200), maximumDelay: .seconds(10))
/// backoff.delay(attempt: 3, random: 0.5)          // 600 ms: between 400 ms and 800 ms
///
/// var schedule = backoff.schedule()               // counts failures, draws the jitter
/// try await schedule.wait()                       // sleeps the next delay (on the continuous clock)
/// schedule.reset()                                // after a success
/// ```
public struct GQLBackoff: Sendable, Hashable {
    /// The ceiling of the first delay. Default 0.5 s.
    public var initialDelay: Duration
    /// The largest delay. Default 30 s.
    public var maximumDelay: Duration
    /// How much the ceiling grows from one attempt to the next (at least 1). Default 2.
    public var multiplier: Double
    /// The share of each delay that is random, from 0 (none) to 1 (anything between zero and the ceiling).
    /// Default 0.5.
    public var jitter: Double

    /// Creates a backoff.
    public init(
        initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30), multiplier: Double = 2,
        jitter: Double = 0.5
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The ceiling for attempt `attempt` (1-based): `min(maximumDelay, initialDelay × multiplierᵃᵗᵗᵉᵐᵖᵗ⁻¹)`.
    public func ceiling(attempt: Int) -> Duration {
        let initial = initialDelay.seconds
        let maximum = maximumDelay.seconds
        guard initial > 0, maximum > 0 else { return .zero }
        // Grow step by step and stop at the cap: no overflow however large `attempt` is.
        var ceiling = initial
        let factor = multiplier.isFinite ? max(multiplier, 1) : 1
        var step = 1
        while step < attempt, ceiling < maximum, factor > 1 {
            ceiling *= factor
            step += 1
        }
        return Self.duration(min(ceiling, maximum))
    }

    /// The delay before attempt `attempt` (1-based), given a number drawn uniformly from `0..<1` (values outside
    /// are clamped). The same inputs always give the same delay.
    public func delay(attempt: Int, random: Double) -> Duration {
        let ceiling = ceiling(attempt: attempt).seconds
        let share = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        let draw = random.isFinite ? min(max(random, 0), 1) : 1
        return Self.duration(ceiling * (1 - share) + ceiling * share * draw)
    }

    /// A schedule that draws its jitter from the system's random source.
    public func schedule() -> Schedule {
        Schedule(self, random: { Double.random(in: 0..<1) })
    }

    /// A schedule that draws its jitter from `random` (injected by tests for repeatable delays).
    public func schedule(random: @escaping @Sendable () -> Double) -> Schedule {
        Schedule(self, random: random)
    }

    /// A running sequence of retries: counts the failures since the last success and gives each its delay.
    public struct Schedule: Sendable {
        /// The rule the delays follow.
        public let backoff: GQLBackoff
        /// How many delays were handed out since the last ``reset()``: the number of the next attempt minus one.
        public private(set) var failures = 0
        private let random: @Sendable () -> Double

        init(_ backoff: GQLBackoff, random: @escaping @Sendable () -> Double) {
            self.backoff = backoff
            self.random = random
        }

        /// Counts one failure and returns how long to wait before the next attempt.
        public mutating func nextDelay() -> Duration {
            failures += 1
            return backoff.delay(attempt: failures, random: random())
        }

        /// Counts one failure and sleeps its delay on `clock` (injected by tests); throws `CancellationError` when
        /// the task is cancelled.
        public mutating func wait<C: Clock>(on clock: C) async throws where C.Duration == Duration {
            try await clock.sleep(for: nextDelay())
        }

        /// Counts one failure and sleeps its delay on the continuous clock.
        public mutating func wait() async throws {
            try await wait(on: ContinuousClock())
        }

        /// Starts again from the first delay (after a success).
        public mutating func reset() { failures = 0 }
    }

    private static func duration(_ seconds: Double) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        // Beyond about 292 years nanoseconds overflow Int64; no sensible delay is that long.
        return .nanoseconds(Int64(min(seconds, 9e9) * 1e9))
    }
}
