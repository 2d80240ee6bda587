import GQLCore
import GQLNet
import Testing

@testable import GQLSync

/// The delivery decisions, driven with made-up instants and answers: no database, no network.
@Suite struct DeliveryStateMachineTests {
    typealias Machine = DeliveryStateMachine
    let start = ContinuousClock.now

    func machine(batch: Int = 1, maximumAttempts: Int? = nil) -> Machine {
        Machine(
            settings: .init(
                backoff: GQLBackoff(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0),
                batchSize: batch, maximumAttempts: maximumAttempts),
            random: { 0.5 })
    }

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }

    static let ok = DeliveryOutcome.delivered(GQLResult(data: ["x": 1]))
    static let refused = DeliveryOutcome.transient(.init(unreachable: true, failure: .init(message: "refused")))
    static let busy = DeliveryOutcome.transient(
        .init(unreachable: false, retryAfter: .seconds(5), failure: .init(message: "429", httpStatus: 429)))
    static let invalid = DeliveryOutcome.permanent(.init(message: "bad input"))

    func sent(_ id: Int64, _ attempts: Int = 1, _ outcome: DeliveryOutcome) -> Machine.Sent {
        Machine.Sent(id: id, attempts: attempts, outcome: outcome)
    }

    @Test func startsByLookingForLeftoversAndSleepsWhenEmpty() {
        var m = machine(batch: 3)
        #expect(m.next(now: at(0)) == .claim(limit: 3))
        #expect(m.claimed([]) == true)
        #expect(m.next(now: at(0)) == .sleep)
        m.wake()
        #expect(m.next(now: at(0)) == .claim(limit: 3))
    }

    @Test func aWakeDuringAClaimMeansClaimAgainBeforeCallingItDrained() {
        var m = machine()
        _ = m.next(now: at(0))
        m.wake()
        #expect(m.claimed([]) == false)
        #expect(m.next(now: at(0)) == .claim(limit: 1))
        #expect(m.claimed([]) == true)
    }

    @Test func deliveredItemsAreRemovedAndTheNextClaimFollowsAtOnce() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        #expect(m.inFlight == [1])
        #expect(m.next(now: at(0)) == .sleep)
        #expect(m.sent([sent(1, 1, Self.ok)], now: at(0)) == [.remove(1)])
        #expect(m.inFlight == [])
        #expect(m.next(now: at(0)) == .claim(limit: 1))
    }

    @Test func aTransientFailureBacksOffAndNothingOvertakesTheHeadItem() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        #expect(m.sent([sent(1, 1, Self.refused)], now: at(0)) == [.keep(1)])
        #expect(!m.isOnline)
        #expect(m.next(now: at(0.5)) == .wait(until: at(1)))
        // New items do not cut the wait short: the head goes first.
        m.wake()
        #expect(m.next(now: at(0.9)) == .wait(until: at(1)))
        #expect(m.next(now: at(1)) == .claim(limit: 1))
        _ = m.claimed([1])
        #expect(m.sent([sent(1, 2, Self.refused)], now: at(1)) == [.keep(1)])
        #expect(m.next(now: at(1)) == .wait(until: at(3)))  // 1 s, then 2 s
        _ = m.next(now: at(3))
        _ = m.claimed([1])
        #expect(m.sent([sent(1, 3, Self.ok)], now: at(3)) == [.remove(1)])
        #expect(m.isOnline)
        #expect(m.failures == 0)
    }

    /// A 409 to a keyed request (the key still in use) is retried, but not for ever: after
    /// `keyInUseLimit` of them in a row the item is set aside and the queue goes on. Another answer in between
    /// starts the count again.
    @Test func aServerThatRefusedABatchIsSentOneItemPerClaimFromThenOn() {
        var m = machine(batch: 10)
        #expect(m.next(now: at(0)) == .claim(limit: 10))
        _ = m.claimed([1, 2, 3])
        m.refuseBatches()
        _ = m.sent([sent(1, 1, Self.ok), sent(2, 1, Self.ok), sent(3, 1, Self.ok)], now: at(0))
        #expect(m.next(now: at(0)) == .claim(limit: 1))
        _ = m.claimed([4])
        _ = m.sent([sent(4, 1, Self.ok)], now: at(0))
        #expect(m.next(now: at(0)) == .claim(limit: 1))
    }

    @Test func aKeyInUseIsRetriedAFewTimesThenSetAside() {
        let inUse = DeliveryOutcome.transient(
            .init(unreachable: false, failure: .init(message: "HTTP 409", httpStatus: 409), keyInUse: true))
        var m = machine()
        var now = 0.0
        func attempt(_ outcome: DeliveryOutcome) -> [Machine.Decision] {
            while case .wait(let until) = m.next(now: at(now)) { now = Double((until - start).components.seconds) }
            _ = m.claimed([1])
            return m.sent([sent(1, 1, outcome)], now: at(now))
        }
        for _ in 1..<Machine.keyInUseLimit { #expect(attempt(inUse) == [.keep(1)]) }
        #expect(attempt(Self.refused) == [.keep(1)])  // starts the count again
        for _ in 1..<Machine.keyInUseLimit { #expect(attempt(inUse) == [.keep(1)]) }
        guard case .setAside(1, let failure) = attempt(inUse).first else {
            Issue.record("not set aside")
            return
        }
        #expect(failure.httpStatus == 409 && failure.message.contains("idempotency key is in use"))
    }

    @Test func resumeRetriesAtOnce() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        _ = m.sent([sent(1, 1, Self.refused)], now: at(0))
        #expect(m.resume(now: at(0.1)) == true)
        #expect(m.next(now: at(0.1)) == .claim(limit: 1))
        // The failure count is kept until something gets through.
        _ = m.claimed([1])
        _ = m.sent([sent(1, 2, Self.refused)], now: at(0.1))
        #expect(m.next(now: at(0.1)) == .wait(until: at(2.1)))
    }

    @Test func retryAfterIsHonouredWhenLongerThanTheBackoff() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        _ = m.sent([sent(1, 1, Self.busy)], now: at(0))
        #expect(m.isOnline)  // the server answered
        #expect(m.next(now: at(0)) == .wait(until: at(5)))
        #expect(m.lastDelay == .seconds(5))
    }

    @Test func aPermanentFailureIsSetAsideAndTheQueueGoesOn() {
        var m = machine(batch: 3)
        _ = m.next(now: at(0))
        _ = m.claimed([1, 2, 3])
        let decisions = m.sent([sent(1, 1, Self.ok), sent(2, 1, Self.invalid), sent(3, 1, Self.ok)], now: at(0))
        #expect(decisions == [.remove(1), .setAside(2, .init(message: "bad input")), .remove(3)])
        #expect(m.next(now: at(0)) == .claim(limit: 3))
    }

    @Test func aTransientFailureKeepsItsItemAndEveryLaterOne() {
        var m = machine(batch: 3)
        _ = m.next(now: at(0))
        _ = m.claimed([1, 2, 3])
        let decisions = m.sent([sent(1, 1, Self.ok), sent(2, 1, Self.refused), sent(3, 1, Self.ok)], now: at(0))
        #expect(decisions == [.remove(1), .keep(2), .keep(3)])
        #expect(m.next(now: at(0)) == .wait(until: at(1)))
    }

    @Test func maximumAttemptsSetsAStuckItemAside() {
        var m = machine(maximumAttempts: 2)
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        #expect(m.sent([sent(1, 1, Self.refused)], now: at(0)) == [.keep(1)])
        _ = m.next(now: at(1))
        _ = m.claimed([1])
        let decisions = m.sent([sent(1, 2, Self.refused)], now: at(1))
        #expect(decisions == [.setAside(1, .init(message: "gave up after 2 attempts: refused"))])
        #expect(m.next(now: at(1)) == .claim(limit: 1))
    }

    @Test func conflictsGoToTheStrategy() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([7])
        let failure = GQLSync.Failure(message: "Conflict resolver rejects mutation.")
        let decisions = m.sent([sent(7, 1, .conflict(server: ["_version": 3], failure))], now: at(0))
        #expect(decisions == [.conflict(7, server: ["_version": 3], failure)])
        #expect(m.next(now: at(0)) == .claim(limit: 1))
    }

    @Test func aFailedClaimBacksOff() {
        var m = machine()
        _ = m.next(now: at(0))
        m.claimFailed(now: at(0))
        #expect(m.next(now: at(0)) == .wait(until: at(1)))
    }

    @Test func stopEndsTheLoopFromAnyPhase() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        m.stop()
        #expect(m.next(now: at(0)) == .stop)
        #expect(m.sent([sent(1, 1, Self.ok)], now: at(0)) == [.keep(1)])
    }

    @Test func aFailureSettlingAfterABackoffBeganKeepsThatBackoff() {
        var m = machine()
        _ = m.next(now: at(0))
        _ = m.claimed([1])
        _ = m.sent([sent(1, 1, Self.refused)], now: at(0))
        // Writing a conflict's values for an earlier item of the batch failed: the retry stays where it was.
        m.claimFailed(now: at(0.5))
        #expect(m.next(now: at(0.5)) == .wait(until: at(1)))
    }

    #if DEBUG
        /// Reports the driver cannot make trap in debug builds (each in a child process): a send's outcome while
        /// claiming, a claim while a batch is with the server.
        @Test func reportsInTheWrongPhaseTrapInDebugBuilds() async {
            await #expect(processExitsWith: .failure) {
                var m = DeliveryStateMachineTests().machine()
                _ = m.next(now: .now)
                _ = m.sent([DeliveryStateMachineTests().sent(1, 1, DeliveryStateMachineTests.ok)], now: .now)
            }
            await #expect(processExitsWith: .failure) {
                var m = DeliveryStateMachineTests().machine()
                _ = m.next(now: .now)
                _ = m.claimed([1])
                _ = m.claimed([2])
            }
        }
    #endif
}
