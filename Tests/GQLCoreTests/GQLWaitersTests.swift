import GQLCore
import GQLTestSupport
import Testing

@Suite struct GQLWaitersTests {
    private typealias Waiters = GQLWaiters<Int, Never>

    /// Waits on `ticket` in a task of its own; -1 when cancelled.
    private static func waiting(_ state: GQLLocked<Waiters>, _ ticket: Waiters.Ticket) -> Task<Int, Never> {
        Task { await state.wait(for: ticket, in: \.self) { _ in .success(-1) } }
    }

    /// Returns once `count` tasks are suspended on `state`.
    private static func suspended(_ state: GQLLocked<Waiters>, count: Int) async {
        while state.withLock({ $0.suspendedCount }) < count { await Task.yield() }
    }

    @Test func aValueHandedOverBeforeTheWaitIsReturnedAtOnce() async {
        let state = GQLLocked(Waiters())
        let ticket = state.withLock { $0.add() }
        let resumption = state.withLock { $0.resume(ticket, with: .success(7)) }
        #expect(resumption != nil)
        resumption?.run()
        #expect(state.withLock { $0.isEmpty })
        #expect(await state.wait(for: ticket, in: \.self) { _ in .success(-1) } == 7)
        #expect(state.withLock { $0.count == 0 && $0.suspendedCount == 0 })
    }

    @Test func aWaitInACancelledTaskEndsWithTheCancellationOutcome() async {
        let state = GQLLocked(Waiters())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await state.wait(in: \.self, unlessReady: { _ in nil }, whenCancelled: { _ in .success(-1) })
        }
        #expect(await task.value == -1)
        #expect(state.withLock { $0.count } == 0)
        // Nobody waits now: the hand-over finds no one.
        #expect(state.withLock { $0.resumeFirst(with: .success(1)) } == nil)
    }

    @Test func cancellingASuspendedWaitEndsItAndNothingIsHandedToIt() async {
        let state = GQLLocked(Waiters())
        let ticket = state.withLock { $0.add() }
        let task = Self.waiting(state, ticket)
        await Self.suspended(state, count: 1)
        task.cancel()
        #expect(await task.value == -1)
        #expect(state.withLock { $0.resume(ticket, with: .success(5)) } == nil)
        #expect(state.withLock { $0.count } == 0)
    }

    @Test func aSecondHandOverIsRefusedAndTheFirstValueWins() async {
        let state = GQLLocked(Waiters())
        let ticket = state.withLock { $0.add() }
        let task = Self.waiting(state, ticket)
        await Self.suspended(state, count: 1)
        let first = state.withLock { $0.resume(ticket, with: .success(1)) }
        let second = state.withLock { $0.resume(ticket, with: .success(2)) }
        #expect(first != nil)
        #expect(second == nil)
        first?.run()
        #expect(await task.value == 1)
        // A cancellation after the value came changes nothing.
        task.cancel()
        #expect(await task.value == 1)
    }

    @Test func aReadyValueIsTakenWithoutWaiting() async throws {
        struct Queue {
            var items = [3, 4]
            var waiters = GQLWaiters<Int, any Error>()
        }
        let state = GQLLocked(Queue())
        let take: (inout Queue) -> Result<Int, any Error>? = { queue in
            queue.items.isEmpty ? nil : .success(queue.items.removeFirst())
        }
        #expect(try await state.wait(in: \.waiters, unlessReady: take) { _ in .failure(CancellationError()) } == 3)
        #expect(try await state.wait(in: \.waiters, unlessReady: take) { _ in .failure(CancellationError()) } == 4)
        #expect(state.withLock { $0.waiters.count } == 0)
    }

    @Test func aFailureHandedOverIsThrown() async {
        struct Failed: Error, Equatable {}
        let state = GQLLocked(GQLWaiters<Int, Failed>())
        let ticket = state.withLock { $0.add() }
        let task = Task { () -> Result<Int, Failed> in
            do throws(Failed) {
                return .success(try await state.wait(for: ticket, in: \.self) { _ in .success(-1) })
            } catch {
                return .failure(error)
            }
        }
        while state.withLock({ $0.suspendedCount }) == 0 { await Task.yield() }
        state.withLock { $0.resumeAll(with: .failure(Failed())) }.run()
        #expect(await task.value == .failure(Failed()))
    }

    @Test func manyWaitersAreHandedValuesFirstComeFirstServedOrAllAtOnce() async {
        let state = GQLLocked(Waiters())
        let tickets = state.withLock { waiters in (0..<50).map { _ in waiters.add() } }
        let tasks = tickets.map { Self.waiting(state, $0) }
        await Self.suspended(state, count: 25)
        // In the order of the tickets, whether suspended yet or not.
        for value in 0..<25 { state.withLock { $0.resumeFirst(with: .success(value)) }?.run() }
        #expect(state.withLock { $0.count } == 25)
        state.withLock { $0.resumeAll(with: .success(99)) }.run()
        #expect(state.withLock { $0.resumeFirst(with: .success(0)) } == nil)
        var values: [Int] = []
        for task in tasks { values.append(await task.value) }
        #expect(values == Array(0..<25) + Array(repeating: 99, count: 25))
        #expect(state.withLock { $0.count == 0 && $0.suspendedCount == 0 })
    }

    /// Hand-overs (to a ticket, to the first waiter, twice) and cancellations race from tasks of their own, after a
    /// seeded number of yields each: every wait returns exactly once, with a value handed to it (each accepted
    /// hand-over reaches exactly one wait) or the cancellation outcome.
    @Test func racingHandOversAndCancellationsResumeEveryWaitExactlyOnce() async {
        var random = SplitMix64(seed: TestSeed.make("GQLWaitersTests race"))
        for round in 0..<150 {
            let state = GQLLocked(Waiters())
            let count = Int.random(in: 1...6, using: &random)
            let tickets = state.withLock { waiters in (0..<count).map { _ in waiters.add() } }
            let waits = tickets.map { Self.waiting(state, $0) }
            let accepted = GQLLocked<[Int]>([])
            await withTaskGroup(of: Void.self) { group in
                for (index, ticket) in tickets.enumerated() {
                    let yields = (0..<3).map { _ in Int.random(in: 0...4, using: &random) }
                    let plan = Int.random(in: 0..<4, using: &random)
                    let cancelLate = Bool.random(using: &random)
                    let value = round * 100 + index * 10
                    let wait = waits[index]
                    group.addTask {
                        for _ in 0..<yields[0] { await Task.yield() }
                        switch plan {
                        case 0: break
                        case 1: wait.cancel()
                        default:
                            for offset in 0..<(plan == 3 ? 2 : 1) {
                                let handed = value + offset
                                let resumption = state.withLock { waiters in
                                    offset == 0
                                        ? waiters.resume(ticket, with: .success(handed))
                                        : waiters.resumeFirst(with: .success(handed))
                                }
                                if let resumption {
                                    accepted.withLock { $0.append(handed) }
                                    resumption.run()
                                }
                                for _ in 0..<yields[1] { await Task.yield() }
                            }
                        }
                        for _ in 0..<yields[2] { await Task.yield() }
                        // Whatever the plan, the wait ends: a late cancellation, or a late hand-over.
                        if cancelLate {
                            wait.cancel()
                        } else if let resumption = state.withLock({ $0.resume(ticket, with: .success(value + 5)) }) {
                            accepted.withLock { $0.append(value + 5) }
                            resumption.run()
                        }
                    }
                }
            }
            var received: [Int] = []
            for wait in waits { received.append(await wait.value) }
            let handed = accepted.withLock { $0 }
            #expect(received.filter { $0 >= 0 }.sorted() == handed.sorted(), "round \(round)")
            #expect(received.filter { $0 < 0 }.count == count - handed.count, "round \(round)")
            #expect(state.withLock { $0.count == 0 && $0.suspendedCount == 0 }, "round \(round)")
        }
    }
}

@Suite struct GQLWaiterTests {
    @Test func theFirstHandOverWinsEvenBeforeTheWait() async {
        let waiter = GQLWaiter<String>()
        #expect(waiter.resume(returning: "first"))
        #expect(!waiter.resume(returning: "second"))
        #expect(await waiter.wait(whenCancelled: "cancelled") == "first")
    }

    @Test func aSuspendedWaitGetsTheValueOrTheCancellation() async {
        let given = GQLWaiter<String>()
        let waiting = Task { await given.wait(whenCancelled: "cancelled") }
        // Hand-overs from another task; whether the wait suspended yet or not, it gets the first.
        let handed = await Task { given.resume(returning: "value") }.value
        #expect(handed)
        #expect(await waiting.value == "value")

        let cancelled = GQLWaiter<String>()
        let task = Task { await cancelled.wait(whenCancelled: "cancelled") }
        task.cancel()
        let value = await task.value
        #expect(value == "cancelled")
        // Too late: the wait ended.
        #expect(!cancelled.resume(returning: "value"))
    }
}
