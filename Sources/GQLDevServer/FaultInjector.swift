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
}
