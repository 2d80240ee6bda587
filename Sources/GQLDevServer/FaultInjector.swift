import GQLCore

/// Applies ``GQLDevServer/Faults``: delays answers, fails a seeded share of POSTs with HTTP 500.
///
/// One injector serves the whole server, so the sequence of failing POSTs depends only on the seed and the
/// order in which POSTs arrive.
struct FaultInjector: Sendable {
    let faults: GQLDevServer.Faults
    private let random: GQLLocked<SplitMix64>

    init(_ faults: GQLDevServer.Faults) {
        self.faults = faults
        self.random = GQLLocked(SplitMix64(seed: faults.seed))
    }

    /// Whether any fault is configured for HTTP (a delay or a fail rate).
    var isActive: Bool { faults.latencyMilliseconds > 0 || faults.failRate > 0 }

    /// Waits `latencyMilliseconds` (returns early when the task is cancelled).
    func delay() async {
        guard faults.latencyMilliseconds > 0 else { return }
        try? await Task.sleep(for: .milliseconds(faults.latencyMilliseconds))
    }

    /// Whether this POST is one of the `failRate` share answered with HTTP 500. Draws a number only when a
    /// fail rate is set.
    func shouldFailPOST() -> Bool {
        guard faults.failRate > 0 else { return false }
        let draw = random.withLock { $0.nextUnitInterval() }
        return draw < faults.failRate
    }

    /// A tiny seeded pseudo-random generator (Steele, Lea and Flood's SplitMix64), so injected faults repeat
    /// from run to run with the same seed.
    ///
    /// ```swift
    /// var random = SplitMix64(seed: 1)
    /// let share = random.nextUnitInterval()   // 0 ..< 1
    /// ```
    struct SplitMix64: RandomNumberGenerator, Sendable {
        private var state: UInt64

        init(seed: UInt64) {
            self.state = seed
        }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// A double in `0 ..< 1` from the top 53 bits of the next value.
        mutating func nextUnitInterval() -> Double {
            Double(next() >> 11) * 0x1.0p-53
        }
    }
}
