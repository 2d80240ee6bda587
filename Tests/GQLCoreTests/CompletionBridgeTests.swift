import Dispatch
import GQLCore
import Testing

/// GQLCore's `CompletionBridge`, which every `+Callbacks.swift` form calls: the completion runs once, with the value
/// or the error; a cancelled task's operation reports its cancellation; a serial queue keeps call order.
struct CompletionBridgeTests {
    struct Refused: Error {}

    @Test func aValueReachesTheCompletion() async {
        let (value, error) = await withCheckedContinuation { (done: CheckedContinuation<(Int?, (any Error)?), Never>) in
            CompletionBridge.start({ done.resume(returning: ($0, $1)) }) { 42 }
        }
        #expect(value == 42 && error == nil)
    }

    @Test func anErrorReachesTheCompletion() async {
        let (value, error) = await withCheckedContinuation { (done: CheckedContinuation<(Int?, (any Error)?), Never>) in
            CompletionBridge.start({ done.resume(returning: ($0, $1)) }) { () async throws -> Int in throw Refused() }
        }
        #expect(value == nil && error is Refused)
        let failure = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            CompletionBridge.start({ done.resume(returning: $0) }) { throw Refused() }
        }
        #expect(failure is Refused)
        let success = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            CompletionBridge.start({ done.resume(returning: $0) }) {}
        }
        #expect(success == nil)
    }

    @Test func cancellingTheTaskCancelsTheOperation() async {
        let started = AsyncStream<Void>.makeStream()
        let error = await withCheckedContinuation { (done: CheckedContinuation<(any Error)?, Never>) in
            let task = CompletionBridge.start({ done.resume(returning: $0) }) {
                started.continuation.yield()
                // Ends only by cancellation: sleeping throws CancellationError when the task is cancelled.
                try await Task.sleep(for: .seconds(3600))
            }
            Task {
                for await _ in started.stream { break }
                task.cancel()
            }
        }
        #expect(error is CancellationError)
    }

    @Test func aSerialQueueCompletesCallsInTheirOrder() async {
        let queue = DispatchQueue(label: "CompletionBridgeTests")
        let seen = GQLLocked<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for n in 1...50 {
                CompletionBridge.run(
                    on: queue,
                    { value, _ in
                        let count = seen.withLock { seen in
                            seen.append(value ?? -1)
                            return seen.count
                        }
                        if count == 50 { done.resume() }
                    }
                ) { n }
            }
        }
        #expect(seen.withLock { $0 } == Array(1...50))
    }
}
