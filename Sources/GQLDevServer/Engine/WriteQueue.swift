import Dispatch
import GQLCore
import GQLStore
import Synchronization

/// The mutations of an engine's stores that are not committed on their caller's thread: queued, and committed by
/// one worker, several in one transaction (group commit).
///
/// Under concurrent writes most of a mutation's cost is the commit (the WAL append, SQLite's file locks); a group
/// pays it once. Each mutation still runs as if alone: it makes its checks (the key, `_version`, the condition)
/// against what the mutations before it in the group wrote, then makes its one write statement, and its answer or
/// error is its own. A mutation that fails with a ``ResolverError`` (a check) has written nothing; one that fails
/// with any other error (SQLite refusing a statement) rolls the whole group back, and the group's mutations are then
/// committed one transaction each, so that only the failing one fails. Answers are handed out after the commit,
/// in queue order.
final class WriteQueue: Sendable {
    typealias Completion = @Sendable (Result<GQLValues, any Error>) -> Void

    private struct Job {
        let mutation: ModelStore.Mutation
        let done: Completion
    }

    private struct State {
        var jobs: [Job] = []
        var draining = false
    }

    let database: GQLDatabase
    /// The most mutations committed in one transaction.
    let maxGroup: Int
    private let state = GQLLocked(State())
    /// Whether the worker is draining: read without the lock by every mutation an event loop might commit itself.
    private let busy = Atomic<Bool>(false)
    private let worker = DispatchQueue(label: "GQLDevServer.WriteQueue")
    private let committed = Atomic<Int>(0)

    init(database: GQLDatabase, maxGroup: Int = 64) {
        self.database = database
        self.maxGroup = max(1, maxGroup)
    }

    /// Whether nothing is queued or being committed by the worker now.
    var isQuiet: Bool { !busy.load(ordering: .acquiring) }

    /// How many mutations wait for the worker (not counting the group it is committing).
    var queued: Int { state.withLock { $0.jobs.count } }

    /// How many transactions the worker has committed (a group, or one mutation after a group was rolled back).
    var transactions: Int { committed.load(ordering: .relaxed) }

    /// Queues `mutation`; `done` is called on the worker's thread with its answer once its group has committed, or
    /// with its error.
    func submit(_ mutation: @escaping ModelStore.Mutation, _ done: @escaping Completion) {
        let start = state.withLock { state in
            state.jobs.append(Job(mutation: mutation, done: done))
            guard !state.draining else { return false }
            state.draining = true
            busy.store(true, ordering: .releasing)
            return true
        }
        if start { worker.async { self.drain() } }
    }

    /// Queues `mutation` and waits for its answer.
    func commit(_ mutation: @escaping ModelStore.Mutation) async throws -> GQLValues {
        try await withCheckedThrowingContinuation { continuation in
            submit(mutation) { continuation.resume(with: $0) }
        }
    }

    private func drain() {
        while let group = nextGroup() { commit(group) }
    }

    /// The oldest queued jobs, at most ``maxGroup``; `nil`, with the worker marked idle, when none are left.
    private func nextGroup() -> [Job]? {
        state.withLock { state in
            guard !state.jobs.isEmpty else {
                state.draining = false
                busy.store(false, ordering: .releasing)
                return nil
            }
            let count = min(state.jobs.count, maxGroup)
            let group = Array(state.jobs.prefix(count))
            state.jobs.removeFirst(count)
            return group
        }
    }

    private func commit(_ group: [Job]) {
        var results: [Result<GQLValues, any Error>] = []
        results.reserveCapacity(group.count)
        do {
            try database.write(origin: MutationEvents.origin) { tx in
                for job in group {
                    do {
                        results.append(.success(try job.mutation(tx)))
                    } catch let error as ResolverError {
                        results.append(.failure(error))  // a check failed before its write: nothing to undo
                    }
                }
            }
            committed.add(1, ordering: .relaxed)
        } catch {
            // A statement or the commit failed: the group was rolled back; each on its own, so only its own fails.
            results = group.map { job in
                Result {
                    let item = try database.write(origin: MutationEvents.origin, job.mutation)
                    committed.add(1, ordering: .relaxed)
                    return item
                }
            }
        }
        for (job, result) in zip(group, results) { job.done(result) }
    }
}
