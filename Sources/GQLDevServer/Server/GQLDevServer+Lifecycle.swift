import GQLCore
import ServiceLifecycle

extension GQLDevServer {
    /// Where a server is in its life: not started, listening on a port, or stopped; and who waits for what.
    ///
    /// ``GQLDevServer/endpoints()`` waits for the port, ``GQLDevServer/shutdown()`` for the end of
    /// ``GQLDevServer/run()``. A shutdown before `run()` makes `run()` return at once.
    final class Lifecycle: Sendable {
        private enum Phase {
            case idle
            case running(ServiceGroup, port: Int?)
            case stopped(GQLError?)
        }

        private struct State {
            var phase = Phase.idle
            var shutdownRequested = false
            var portWaiters: [CheckedContinuation<Int, any Error>] = []
            var stopWaiters: [CheckedContinuation<Void, Never>] = []
        }

        private let state = GQLLocked(State())

        /// Records that `group` runs the server; `false` when it ran already, or when a shutdown came first
        /// (the server then counts as stopped, and ``port()`` throws).
        func starting(_ group: ServiceGroup) -> Bool {
            let (started, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Int, any Error>]) in
                guard case .idle = state.phase else { return (false, []) }
                guard !state.shutdownRequested else {
                    state.phase = .stopped(nil)
                    defer { state.portWaiters = [] }
                    return (false, state.portWaiters)
                }
                state.phase = .running(group, port: nil)
                return (true, [])
            }
            for waiter in waiters {
                waiter.resume(throwing: GQLError(.closed, "The server was shut down before it ran."))
            }
            return started
        }

        /// Whether ``shutdown()`` was called.
        var isShutdownRequested: Bool { state.withLock { $0.shutdownRequested } }

        func listening(on port: Int) {
            let waiters = state.withLock { state in
                guard case .running(let group, _) = state.phase else { return [CheckedContinuation<Int, any Error>]() }
                state.phase = .running(group, port: port)
                defer { state.portWaiters = [] }
                return state.portWaiters
            }
            for waiter in waiters { waiter.resume(returning: port) }
        }

        func stopped(_ error: (any Error)?) {
            let stoppedError =
                error.map { GQLError(.io, "The server stopped: \($0)") }
                ?? GQLError(.closed, "The server has stopped.")
            let (portWaiters, stopWaiters) = state.withLock { state in
                state.phase = .stopped(error == nil ? nil : stoppedError)
                defer {
                    state.portWaiters = []
                    state.stopWaiters = []
                }
                return (state.portWaiters, state.stopWaiters)
            }
            for waiter in portWaiters { waiter.resume(throwing: stoppedError) }
            for waiter in stopWaiters { waiter.resume() }
        }

        /// The port once listening; throws when the server stopped (or failed to start) first.
        func port() async throws -> Int {
            try await withCheckedThrowingContinuation { continuation in
                let immediate: Result<Int, any Error>? = state.withLock { state in
                    switch state.phase {
                    case .running(_, let port?): return .success(port)
                    case .stopped(let error): return .failure(error ?? GQLError(.closed, "The server has stopped."))
                    case .idle, .running(_, nil):
                        state.portWaiters.append(continuation)
                        return nil
                    }
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        }

        /// Asks the running group to shut down gracefully and waits until `run()` returns.
        func shutdown() async {
            let group: ServiceGroup? = state.withLock { state in
                state.shutdownRequested = true
                if case .running(let group, _) = state.phase { return group }
                return nil
            }
            guard let group else { return }
            await group.triggerGracefulShutdown()
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if case .stopped = state.phase { return true }
                    state.stopWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }
}
