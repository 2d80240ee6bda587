import GQLCore
import Synchronization
import Testing

@Suite struct GQLBackoffTests {
    private let backoff = GQLBackoff(initialDelay: .milliseconds(100), maximumDelay: .seconds(1), multiplier: 2)

    @Test func ceilingsGrowAndStopAtTheCap() {
        let ceilings = (1...7).map { backoff.ceiling(attempt: $0) }
        #expect(
            ceilings == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1), .seconds(1),
            ])
    }

    @Test func hugeAttemptNumbersStayAtTheCap() {
        #expect(backoff.ceiling(attempt: Int.max) == .seconds(1))
        #expect(backoff.delay(attempt: Int.max, random: 0.999) <= .seconds(1))
    }

    @Test func jitterSpansTheLowerShareOfTheCeiling() {
        // jitter 0.5: from half the ceiling (random 0) to the whole ceiling (random 1).
        #expect(backoff.delay(attempt: 3, random: 0) == .milliseconds(200))
        #expect(backoff.delay(attempt: 3, random: 0.5) == .milliseconds(300))
        #expect(backoff.delay(attempt: 3, random: 1) == .milliseconds(400))
        var none = backoff
        none.jitter = 0
        #expect(none.delay(attempt: 3, random: 0.123) == .milliseconds(400))
        var full = backoff
        full.jitter = 1
        #expect(full.delay(attempt: 3, random: 0) == .zero)
    }

    @Test func outOfRangeInputsAreClamped() {
        #expect(backoff.delay(attempt: 1, random: -4) == .milliseconds(50))
        #expect(backoff.delay(attempt: 1, random: .nan) == .milliseconds(100))
        #expect(backoff.delay(attempt: 0, random: 1) == .milliseconds(100))
        var shrinking = backoff
        shrinking.multiplier = 0.5  // never shrinks: treated as 1
        #expect(shrinking.ceiling(attempt: 5) == .milliseconds(100))
        var zero = backoff
        zero.initialDelay = .zero
        #expect(zero.delay(attempt: 4, random: 0.5) == .zero)
    }

    @Test func scheduleCountsFailuresAndResets() {
        var schedule = backoff.schedule(random: { 1 })
        #expect(schedule.nextDelay() == .milliseconds(100))
        #expect(schedule.nextDelay() == .milliseconds(200))
        #expect(schedule.failures == 2)
        schedule.reset()
        #expect(schedule.failures == 0)
        #expect(schedule.nextDelay() == .milliseconds(100))
    }

    @Test func scheduleSleepsOnTheInjectedClock() async throws {
        let clock = RecordingClock()
        var schedule = backoff.schedule(random: { 0 })
        try await schedule.wait(on: clock)
        try await schedule.wait(on: clock)
        #expect(clock.slept == [.milliseconds(50), .milliseconds(100)])
    }

    @Test func waitingThrowsWhenCancelled() async {
        let task = Task {
            var schedule = GQLBackoff(initialDelay: .seconds(60), maximumDelay: .seconds(60)).schedule()
            try await schedule.wait()
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// A clock whose time stands still: it records the durations it is asked to sleep and returns at once.
private final class RecordingClock: Clock {
    typealias Duration = Swift.Duration
    typealias Instant = ContinuousClock.Instant
    private let durations = Mutex<[Duration]>([])

    let now = ContinuousClock.now
    var minimumResolution: Duration { .nanoseconds(1) }
    var slept: [Duration] { durations.withLock { $0 } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        durations.withLock { $0.append(deadline - now) }
    }
}
