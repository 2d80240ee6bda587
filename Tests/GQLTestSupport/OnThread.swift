import Foundation

/// Runs `body` on a thread of its own and returns what it returns.
///
/// For blocking work in an async test — a semaphore, a blocking socket read, a child's output until it ends — that
/// must not hold one of Swift concurrency's cooperative threads: every test running in parallel shares them (two on
/// a two-core machine), and a test blocking one holds back the servers, clients and timers of all the others.
///
/// ```swift
/// let reply = await onThread { recv(descriptor, &buffer, buffer.count, 0) }
/// ```
public func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Runs `body` on a thread of its own and returns what it returns, or throws what it throws (see the non-throwing
/// form).
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
