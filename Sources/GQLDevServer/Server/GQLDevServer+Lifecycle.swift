import GQLCore
import ServiceLifecycle

extension GQLDevServer {
    /// Where a server is in its life: not started, listening on a port, or stopped; and who waits for what.
    ///
    /// ``GQLDevServer/endpoints()`` waits for the port, ``GQLDevServer/shutdown()`` for the end of
    /// ``GQLDevServer/run()``. A shutdown before `run()` makes `run()` return at once.
    package final class Lifecycle: Sendable {
        private enum Phase {
            case idle
            case running(ServiceGroup, port: Int?)
            case stopped(GQLError?)
        }

        private struct State {
            var phase = Phase.idle
            var shutdownRequested = false
            var portWaiters = GQLWaiters<Int, any Error>()
            var stopWaiters = GQLWaiters<Void, Never>()
        }

        private let state = GQLLocked(State())

        package init() {}

        /// Records that `group` runs the server; `false` when it ran already, or when a shutdown came first
        /// (the server then counts as stopped, and ``port()`` throws).
        package func starting(_ group: ServiceGroup) -> Bool {
            let (started, resumption) = state.withLock { state -> (Bool, GQLWaiters<Int, any Error>.Resumption?) in
                guard case .idle = state.phase else { return (false, nil) }
                guard !state.shutdownRequested else {
                    state.phase = .stopped(nil)
                    let early = GQLError(.closed, "The server was shut down before it ran.")
                    return (false, state.portWaiters.resumeAll(with: .failure(early)))
                }
                state.phase = .running(group, port: nil)
                return (true, nil)
            }
            resumption?.run()
            return started
        }

        /// Whether ``shutdown()`` was called.
        package var isShutdownRequested: Bool { state.withLock { $0.shutdownRequested } }

        /// Whether `run()` has ended (or will not run).
        package var hasStopped: Bool { state.withLock { if case .stopped = $0.phase { true } else { false } } }

        /// How many tasks are suspended waiting for the port, and for the end of `run()` (for tests that must know
        /// a wait began).
        package var suspendedWaits: (port: Int, stop: Int) {
            state.withLock { ($0.portWaiters.suspendedCount, $0.stopWaiters.suspendedCount) }
        }

        package func listening(on port: Int) {
            state.withLock { state -> GQLWaiters<Int, any Error>.Resumption? in
                guard case .running(let group, _) = state.phase else { return nil }
                state.phase = .running(group, port: port)
                return state.portWaiters.resumeAll(with: .success(port))
            }?.run()
        }

        package func stopped(_ error: (any Error)?) {
            let stoppedError =
                error.map { GQLError(.io, "The server stopped: \($0)") }
                ?? GQLError(.closed, "The server has stopped.")
            let (portWaiters, stopWaiters) = state.withLock { state in
                state.phase = .stopped(error == nil ? nil : stoppedError)
                return (
                    state.portWaiters.resumeAll(with: .failure(stoppedError)),
                    state.stopWaiters.resumeAll(with: .success(()))
                )
            }
            portWaiters.run()
            stopWaiters.run()
        }

        /// The port once listening; throws when the server stopped (or failed to start) first, and
        /// `CancellationError` at once when the waiting task is cancelled.
        package func port() async throws -> Int {
            try await state.wait(
                in: \.portWaiters,
                unlessReady: { state in
                    switch state.phase {
                    case .running(_, let port?): return .success(port)
                    case .stopped(let error): return .failure(error ?? GQLError(.closed, "The server has stopped."))
                    case .idle, .running(_, nil): return nil
                    }
                },
                whenCancelled: { _ in .failure(CancellationError()) })
        }

        /// Asks the running group to shut down gracefully and waits until `run()` returns; a cancelled caller
        /// stops waiting at once (the shutdown it asked for goes on).
        package func shutdown() async {
            let group: ServiceGroup? = state.withLock { state in
                state.shutdownRequested = true
                if case .running(let group, _) = state.phase { return group }
                return nil
            }
            guard let group else { return }
            await group.triggerGracefulShutdown()
            await state.wait(
                in: \.stopWaiters,
                unlessReady: { state in
                    if case .stopped = state.phase { return .success(()) }
                    return nil
                },
                whenCancelled: { _ in .success(()) })
        }
    }
}
