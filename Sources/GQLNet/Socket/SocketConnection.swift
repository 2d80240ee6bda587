import Foundation
import GQLCore
import Logging

/// Drives one server's WebSocket: opens sockets, carries out ``SocketStateMachine``'s decisions, routes results to
/// their streams and runs the deadline timer.
///
/// All machine calls happen under one lock, and messages are queued for the socket's writer (``SocketOutbox``) in
/// the same critical section, so they leave in the order the machine decided them. Results, `connect()` callers and
/// state observers are resumed after the lock is released. Each operation's results wait in a ``SocketResults``
/// bounded by watermarks: when one reaches its high watermark the machine pauses reading from the socket until the
/// caller caught up (lock order: a results buffer's lock, then this one; never the other way).
final class SocketConnection: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// Where and how to connect.
    struct Endpoint: Sendable {
        var url: String
        var codec: SocketCodec
        /// Headers sent on the WebSocket handshake.
        var handshakeHeaders: [String: String]
        /// Evaluated before every (re)connect: the `connection_init` payload, or for AppSync extra authorization.
        var connectionPayload: GQLServer.ConnectionPayload?
        /// Asked on every (re)connect for the payload's (AppSync: the header's) `Authorization`.
        var authorization: GQLServer.AuthorizationProvider?
        /// AppSync: the API host and the authorization every `start` and the URL carry (without the provider's part).
        var appSyncHost: String?
        var appSyncAuthorization: GQLValues
    }

    struct Shared {
        var machine: SocketStateMachine
        var streams: [String: SocketResults] = [:]
        /// The operations whose results reached their high watermark.
        var lagging: Set<String> = []
        var connectWaiters = GQLWaiters<Void, any Error>()
        /// The writer queue of the current socket, and the socket once it is open.
        var outgoing: SocketOutbox?
        var socket: WebSocketChannel?
        var socketTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        /// When the running timer task wakes next; a deadline moving earlier restarts it.
        var timerDeadline: ContinuousClock.Instant?
        var observers: [Int: AsyncStream<GQLServer.ConnectionState>.Continuation] = [:]
        var state: GQLServer.ConnectionState = .disconnected
        var nextID = 0
        /// AppSync: the authorization of the current connection, repeated in every `start`.
        var authorization: GQLValues?
        /// What the authorization provider gave the current connection: the refused value of a retry.
        var sentAuthorization: String?
        /// After ``shutdown()``: operations and connects fail with `.closed`, state streams end at once.
        var isShutDown = false
        /// Callers of ``startsAcknowledged(within:)``: the subscriptions each still waits for.
        var startWaiters: [Int: (pending: Set<String>, waiter: GQLWaiter<Bool>)] = [:]
    }

    /// Work to do once the lock is released.
    enum Effect {
        case yield(SocketResults, GQLValue)
        case finish(SocketResults, (any Error)?)
        case resume(GQLWaiters<Void, any Error>.Resumption)
        /// A caller of ``startsAcknowledged(within:)`` has nothing left to wait for.
        case startsDone(GQLWaiter<Bool>)
    }

    let endpoint: Endpoint
    let configuration: GQLServer.Configuration
    let shared: GQLLocked<Shared>
    let logger: NetLog

    init(endpoint: Endpoint, configuration: GQLServer.Configuration) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.logger = NetLog(configuration.logger)
        var settings = SocketStateMachine.Settings(
            codec: endpoint.codec, ackTimeout: configuration.connectTimeout, pingInterval: configuration.pingInterval,
            keepAliveTimeout: configuration.keepAliveTimeout, reconnect: configuration.reconnect)
        settings.retriesRefusedAuthorization = endpoint.authorization != nil
        self.shared = GQLLocked(Shared(machine: SocketStateMachine(settings: settings)))
    }

    // MARK: - Caller API

    var state: GQLServer.ConnectionState { shared.withLock { $0.state } }

    /// Returns once the server acknowledged a connection; cancelling the calling task stops the wait.
    func connect() async throws {
        let (ticket, effects) = try shared.withLock { shared in
            guard !shared.isShutDown else { throw Self.shutDownError("connect") }
            guard !Task.isCancelled else { throw Self.connectCancelled }
            // Added first: the machine may answer at once (already connected).
            let ticket = shared.connectWaiters.add()
            return (ticket, apply(shared.machine.connectRequested(at: .now), to: &shared))
        }
        run(effects)
        try await shared.wait(for: ticket, in: \.connectWaiters) { shared in
            // The machine stops counting this caller; what it answers (closing a socket opened for it alone) runs
            // under the lock and leaves nothing to run after it.
            _ = self.apply(shared.machine.connectWithdrawn(), to: &shared)
            return .failure(Self.connectCancelled)
        }
    }

    private static var connectCancelled: GQLError { GQLError(.cancelled, "connect() was cancelled") }

    func disconnect() {
        run(shared.withLock { apply($0.machine.disconnectRequested(), to: &$0) })
    }

    /// Starts an operation whose results go to a new buffer; the caller stopping (``SocketResults/terminate()``)
    /// stops it.
    func results(of request: GQLValue, isSubscription: Bool) -> SocketResults {
        let id = shared.withLock { shared -> String in
            shared.nextID += 1
            return String(shared.nextID)
        }
        let results = SocketResults(
            onLagChange: { [weak self] lagging in self?.lagChanged(id: id, lagging) },
            onTermination: { [weak self] in self?.stop(id: id) })
        let effects = shared.withLock { shared -> [Effect] in
            guard !shared.isShutDown else {
                return [.finish(results, Self.shutDownError(isSubscription ? "subscription" : "operation"))]
            }
            let message: GQLValue
            do {
                message = try endpoint.codec.start(id: id, request: request)
            } catch {
                return [.finish(results, error)]
            }
            shared.streams[id] = results
            let operation = SocketStateMachine.Operation(id: id, startMessage: message, isSubscription: isSubscription)
            return apply(shared.machine.start(operation, at: .now), to: &shared)
        }
        run(effects)
        return results
    }

    /// The states from now on, starting with the current one.
    func states() -> AsyncStream<GQLServer.ConnectionState> {
        let (stream, continuation) = AsyncStream<GQLServer.ConnectionState>.makeStream()
        let key = shared.withLock { shared -> Int in
            shared.nextID += 1
            continuation.yield(shared.state)
            if shared.isShutDown {
                continuation.finish()
            } else {
                shared.observers[shared.nextID] = continuation
            }
            return shared.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.shared.withLock { $0.observers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Ends everything: operations complete, observers finish, the socket closes; returns once its task ended,
    /// after 3 s at most, or at once when the calling task is cancelled (the socket still closes, in the
    /// background, within its close timeouts).
    func shutdown() async {
        guard let socket = shutdownNow() else { return }
        // The close handshake and the upgrade are bounded (close timeout, connect timeout); a connection payload
        // provider that never returns is not: wait a little, then abandon it. Unstructured, because awaiting a
        // task's value does not end on cancellation: a task group would wait for it anyway.
        let done = GQLWaiter<Void>()
        let watchers: [Task<Void, Never>] = [
            Task {
                await socket.value
                done.resume(returning: ())
            },
            Task {
                _ = try? await Task.sleep(for: .seconds(3))
                done.resume(returning: ())
            },
        ]
        await done.wait(whenCancelled: ())
        for watcher in watchers { watcher.cancel() }
        socket.cancel()
    }

    /// ``shutdown()`` without waiting for the socket's task, which it returns.
    @discardableResult
    func shutdownNow() -> Task<Void, Never>? {
        let (effects, observers, timer, socket) = shared.withLock { shared in
            shared.isShutDown = true
            let effects = apply(shared.machine.disconnectRequested(), to: &shared)
            defer { shared.observers.removeAll() }
            return (effects, Array(shared.observers.values), shared.timerTask, shared.socketTask)
        }
        run(effects)
        timer?.cancel()
        for observer in observers { observer.finish() }
        return socket
    }

    private static func shutDownError(_ operation: String) -> GQLError {
        GQLError(.closed, "the server was shut down", operation: operation)
    }

    private func stop(id: String) {
        run(
            shared.withLock { shared in
                shared.streams.removeValue(forKey: id)
                return Self.startSettled(id, in: &shared) + apply(shared.machine.stop(id: id), to: &shared)
            })
    }

    /// An operation's results reached their high watermark (`true`) or came back down to the low one. Called under
    /// that buffer's lock: the machine's answer to a lag change is only `.reading` and `.reschedule`, which run
    /// under this lock and never call back into a buffer.
    private func lagChanged(id: String, _ lagging: Bool) {
        shared.withLock { shared in
            let before = !shared.lagging.isEmpty
            if lagging { shared.lagging.insert(id) } else { shared.lagging.remove(id) }
            let after = !shared.lagging.isEmpty
            guard before != after else { return }
            _ = apply(shared.machine.consumerLagging(after, at: .now), to: &shared)
        }
    }

    /// How many results wait for their callers in all, and the most that waited in one buffer (for the tests).
    var bufferedResults: (count: Int, peak: Int) {
        let buffers = shared.withLock { Array($0.streams.values) }
        return buffers.reduce((0, 0)) { total, buffer in
            let buffered = buffer.buffered
            return (total.0 + buffered.count, max(total.1, buffered.peak))
        }
    }

    // MARK: - Carrying out actions

    /// Carries out the machine's actions that must happen under the lock and returns the rest as effects.
    func apply(_ actions: [SocketStateMachine.Action], to shared: inout Shared) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .open(let generation):
                shared.outgoing?.finish()
                // A writer waiting for an unwritable socket would never reach the end of its queue.
                shared.socket?.closeEventually(code: 1000, reason: "", within: .seconds(2))
                shared.socket = nil
                let outbox = SocketOutbox()
                shared.outgoing = outbox
                shared.socketTask = Task { await self.runSocket(generation, outgoing: outbox) }
            case .send(var message):
                if endpoint.codec.kind == .appSync, let authorization = shared.authorization,
                    message["type"] == "start"
                {
                    message = SocketCodec.authorize(message, with: authorization)
                }
                if let text = try? message.jsonString() { shared.outgoing?.send(text) }
            case .pong(let message):
                if let text = try? message.jsonString() { shared.outgoing?.pong(text) }
            case .close(let code, let reason):
                let reason = Self.closeReason(reason)
                shared.outgoing?.close(code: code, reason: reason)
                shared.outgoing = nil
                // The queue ends with the close; should the writer be stuck (the server does not read), the close
                // goes out anyway.
                shared.socket?.closeEventually(code: code, reason: reason, within: .seconds(2))
                shared.socket = nil
            case .reading(let paused):
                shared.socket?.setReadingPaused(paused)
            case .deliver(let id, let payload):
                if let stream = shared.streams[id] { effects.append(.yield(stream, payload)) }
            case .startAcknowledged(let id):
                effects += Self.startSettled(id, in: &shared)
            case .finish(let id, let ending):
                effects += Self.startSettled(id, in: &shared)
                guard let stream = shared.streams.removeValue(forKey: id) else { continue }
                effects.append(.finish(stream, Self.error(for: ending)))
            case .state(let state):
                // Published under the lock so observers see changes in order (`yield` never calls back in).
                shared.state = state
                for observer in shared.observers.values { observer.yield(state) }
            case .resumeConnects(let error):
                let result: Result<Void, any Error> = error.map { .failure($0) } ?? .success(())
                effects.append(.resume(shared.connectWaiters.resumeAll(with: result)))
            case .reschedule:
                guard let next = shared.machine.nextDeadline else { continue }
                if shared.timerTask != nil, let current = shared.timerDeadline, current <= next { continue }
                shared.timerTask?.cancel()
                shared.timerDeadline = next
                shared.timerTask = Task { await self.runTimer(until: next) }
            }
        }
        return effects
    }

    func run(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .yield(let results, let payload):
                do {
                    results.yield(try GQLResult(response: payload))
                } catch {
                    results.finish(throwing: error)
                }
            case .finish(let stream, let error):
                stream.finish(throwing: error)
            case .resume(let resumption):
                resumption.run()
            case .startsDone(let waiter):
                waiter.resume(returning: true)
            }
        }
    }

    private static func error(for ending: SocketStateMachine.Ending) -> (any Error)? {
        switch ending {
        case .completed: return nil
        case .failed(let error): return error
        case .rejected(let wire):
            let errors = wire.enumerated().map { index, value in
                (try? GQLResult.Error(wire: value, index: index))
                    ?? GQLResult.Error(message: SocketStateMachine.describe(value))
            }
            return GQLResult.Failure(errors: errors, data: nil)
        }
    }

}
