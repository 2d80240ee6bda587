import Dispatch

/// Runs blocking `work` (a SQLite write, a file sync) on a Dispatch worker thread and returns its value or error,
/// so that the caller's thread, one of Swift concurrency's few cooperative ones, is not held while it waits.
///
/// ```swift
/// try await offload { try database.write(body) }
/// ```
///
/// Cancellation does not interrupt it: `work` always runs to its end and the caller gets its true outcome. Work
/// that is a write cannot be taken back half-way, and answering `CancellationError` while the write commits anyway
/// would tell the caller something false; a caller that cares checks `Task.isCancelled` before calling. (GQLStore's
/// async database forms and GQLSync's outbox each had a copy of this with exactly that behaviour; both use this one.)
package func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
