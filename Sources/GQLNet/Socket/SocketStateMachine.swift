import GQLCore

/// The decisions of a WebSocket connection, without any I/O: when to open a socket, what to send, when a silent
/// server is dead, how long to wait before reconnecting, which operations to resend, how operations end.
///
/// The driver (``SocketConnection``) feeds it events with the time they happened and carries out the
/// ``Action``s it returns. Every socket gets a generation number; events of an older socket are ignored, so a
/// socket the machine has given up on cannot disturb its successor.
struct SocketStateMachine: Sendable {
    typealias Instant = ContinuousClock.Instant

    let settings: Settings
    private(set) var phase: Phase = .idle
    /// The reconnect delays: grow with every loss, start over after a stable connection or a fresh start.
    private var backoff: GQLBackoff.Schedule
    private(set) var generation = 0
    /// Live operations by id; `started` orders them for resending; `acknowledged`: AppSync's `start_ack` for it
    /// arrived on the current socket.
    private var live: [String: (operation: Operation, started: Int, acknowledged: Bool)] = [:]
    private var started = 0
    private var pendingConnects = 0
    /// Whether the connection is kept up without subscriptions (a `connect()` succeeded and no `disconnect()` since).
    private var persistent = false
    /// The keep-alive and the pause for a lagging caller (see ``Liveness``).
    private var liveness: Liveness
    /// Whether the caller lags behind the results: reading is paused, and silence is not the server's.
    var consumerLags: Bool { liveness.consumerLags }
    /// When the last retry after a refused authorization started (a refusal within a ping interval of it is final).
    private var lastAuthorizationRetry: Instant?
    /// The socket opened to retry a refused authorization (its provider call has `isRetry` set).
    private(set) var authorizationRetryGeneration: Int?

    init(settings: Settings, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.settings = settings
        self.backoff = settings.reconnect.backoff.schedule(random: random)
        self.liveness = Liveness(settings: settings)
    }

    // MARK: - Client intents

    /// A caller of `connect()` waits for the next acknowledgement (or failure).
    mutating func connectRequested(at now: Instant) -> [Action] {
        switch phase {
        case .ready:
            persistent = true
            return [.resumeConnects(nil)]
        case .opening, .awaitingAck:
            pendingConnects += 1
            return []
        case .waiting(let attempt, _):
            pendingConnects += 1
            return startAttempt(attempt, at: now)
        case .idle, .failed:
            pendingConnects += 1
            return startAttempt(0, at: now)
        }
    }

    /// A caller of `connect()` stopped waiting (its task was cancelled) before the acknowledgement. It no longer
    /// holds the connection: only the callers still waiting make it persistent at the acknowledgement, and a socket
    /// opened for it alone (no operation, no other caller, no earlier successful `connect()`) closes now.
    mutating func connectWithdrawn() -> [Action] {
        guard pendingConnects > 0 else { return [] }
        pendingConnects -= 1
        guard pendingConnects == 0, live.isEmpty, !persistent else { return [] }
        switch phase {
        case .opening, .awaitingAck:
            generation += 1
            phase = .idle
            return [.close(code: 1000, reason: "connect() was cancelled"), .state(.disconnected)]
        case .idle, .ready, .waiting, .failed:
            return []
        }
    }

    /// `disconnect()`: subscriptions finish, queries and mutations fail with `.closed`, the socket closes, and
    /// reconnecting stops. Whatever the old socket still says is ignored.
    mutating func disconnectRequested() -> [Action] {
        persistent = false
        let closed = GQLError(.closed, "the connection was closed by disconnect() or shutdown()")
        var actions = operations.map { Action.finish(id: $0.id, $0.isSubscription ? .completed : .failed(closed)) }
        live.removeAll()
        if pendingConnects > 0 {
            pendingConnects = 0
            actions.append(.resumeConnects(GQLError(.cancelled, "disconnect() was called while connecting")))
        }
        switch phase {
        case .ready:
            if let terminate = settings.codec.terminate { actions.append(.send(terminate)) }
            actions.append(.close(code: 1000, reason: "client disconnect"))
        case .opening, .awaitingAck:
            actions.append(.close(code: 1000, reason: "client disconnect"))
        case .idle:
            return actions
        case .waiting, .failed:
            break
        }
        generation += 1
        phase = .idle
        return actions + [.state(.disconnected)]
    }

    /// An operation starts: sent now when connected, otherwise after the next acknowledgement.
    mutating func start(_ operation: Operation, at now: Instant) -> [Action] {
        started += 1
        live[operation.id] = (operation, started, false)
        switch phase {
        case .ready:
            // Its answer will be behind reads paused for another operation's caller: the pause gets its bound.
            return [sendStart(operation)] + boundSharedPause(at: now)
        case .idle, .failed:
            return startAttempt(0, at: now)
        case .opening, .awaitingAck, .waiting:
            return []
        }
    }

    /// The caller stopped listening to an operation.
    mutating func stop(id: String) -> [Action] {
        guard live.removeValue(forKey: id) != nil else { return [] }
        var actions: [Action] = []
        if case .ready = phase { actions.append(.send(settings.codec.stop(id: id))) }
        return actions + closeIfUnused()
    }

    // MARK: - Socket events

    /// Socket `generation` is open and `connection_init` was sent.
    mutating func socketOpened(_ generation: Int, at now: Instant) -> [Action] {
        // An older socket opened late: the machine moved on (a timeout, a disconnect, a retry).
        guard generation == self.generation else { return [] }
        guard case .opening(let attempt, let deadline) = phase else {
            // Only `.open` creates a socket, in `.opening` with a new generation, and every other way out of
            // `.opening` moves the generation on: the driver reports each socket open once, so this is its bug.
            assertionFailure("SocketStateMachine: socketOpened(\(generation)) of the current socket in phase \(phase)")
            return []
        }
        phase = .awaitingAck(attempt: attempt, deadline: deadline)
        liveness.heard(at: now)
        return []
    }

    /// A message arrived on socket `generation`. Only messages that show the protocol alive count as activity for
    /// the keep-alive: a server that floods pings (or messages of no known type) is not answering ours.
    mutating func received(_ message: ServerMessage, on generation: Int, at now: Instant) -> [Action] {
        guard generation == self.generation else { return [] }
        if message.isActivity { liveness.heard(at: now) }
        switch message {
        case .ack(let timeout):
            guard case .awaitingAck(let attempt, _) = phase else { return [] }
            phase = .ready(attempt: attempt, since: now)
            liveness.acknowledged(keepAliveTimeout: timeout)
            if pendingConnects > 0 { persistent = true }
            pendingConnects = 0
            authorizationRetryGeneration = nil
            // Every operation is sent again on this socket: none is acknowledged on it yet.
            for id in live.keys { live[id]?.acknowledged = false }
            let pause: [Action] =
                liveness.readingPaused ? [.reading(paused: true)] + boundSharedPause(at: now) : []
            return [.state(.connected), .resumeConnects(nil), .reschedule] + pause + operations.map(sendStart)
        case .ping(let payload):
            return [.pong(settings.codec.pong(payload))]
        case .keepAlive:
            return liveness.keepAliveReceived() ? [.reschedule] : []
        case .startAck(let id):
            guard live[id]?.operation.isSubscription == true, case .ready = phase else { return [] }
            live[id]?.acknowledged = true
            return [.startAcknowledged(id: id)]
        case .pong, .unknown:
            return []
        case .next(let id, let payload):
            guard let entry = live[id] else { return [] }
            guard entry.operation.isSubscription else {
                live[id] = nil
                return [.deliver(id: id, payload), .finish(id: id, .completed)] + closeIfUnused()
            }
            return [.deliver(id: id, payload)]
        case .error(let id, let errors):
            guard live[id] != nil else { return [] }
            if settings.codec.kind == .appSync, Self.isUnauthorized(errors), case .ready = phase,
                let retry = retryRefusedAuthorization(close: 1000, reason: "authorization refused", at: now)
            {
                // AppSync checks the token of every `start`: reconnect with a fresh one and send it again.
                return retry
            }
            live[id] = nil
            return [.finish(id: id, .rejected(errors))] + closeIfUnused()
        case .complete(let id):
            guard live.removeValue(forKey: id) != nil else { return [] }
            return [.finish(id: id, .completed)] + closeIfUnused()
        case .connectionError(let payload):
            let detail = payload.map(Self.describe) ?? "no details"
            let error = GQLError(.unauthorized, "the server refused the WebSocket connection: \(detail)")
            return retryRefusedAuthorization(close: 4403, reason: error.message, at: now) ?? fail(error, close: 4403)
        }
    }

    /// Socket `generation` sent something that is not a message of the protocol, or one over the size limit.
    mutating func receivedInvalid(_ error: GQLError, on generation: Int, at now: Instant) -> [Action] {
        guard generation == self.generation else { return [] }
        // The same server would send the same message again: end instead of reconnecting into it.
        return fail(error, close: error.code == .responseTooLarge ? 1009 : 4004)
    }

    /// Socket `generation` closed (`code` is `nil` when it closed without a close frame) or could not be opened.
    mutating func socketClosed(
        _ generation: Int, code: UInt16?, reason: String?, error: GQLError? = nil, at now: Instant
    ) -> [Action] {
        guard generation == self.generation else { return [] }
        // A bad URL, or an upgrade the server refused for good (401, 403, 404 …): retrying cannot help, except
        // with a fresh authorization after a 401.
        if let error, Self.isPermanent(error) {
            if error.httpStatus == 401, let retry = retryRefusedAuthorization(close: nil, at: now) { return retry }
            return fail(error, close: nil)
        }
        let because = reason.flatMap { $0.isEmpty ? nil : ": \($0)" } ?? ""
        switch code {
        case 4401?, 4403?:
            if let retry = retryRefusedAuthorization(close: nil, at: now) { return retry }
            return fail(
                GQLError(.unauthorized, "the server refused the WebSocket connection (close \(code ?? 0)\(because))"),
                close: nil)
        case 4400?, 4406?, 4409?, 4429?, 4500?:
            return fail(
                GQLError(.connection, "the server closed the WebSocket for a protocol error (\(code ?? 0)\(because))"),
                close: nil)
        default:
            let error =
                error
                ?? GQLError(
                    .connection, "the WebSocket closed (\(code.map { "code \($0)" } ?? "no close frame")\(because))")
            return lose(error, at: now, close: nil)
        }
    }

    /// Whether the caller lags behind the results (an operation's buffer reached its high watermark) or caught up.
    ///
    /// While it lags, a ready socket stops reading and the keep-alive waits: the silence is ours, not the server's.
    /// When it catches up, reading resumes and the idle time starts over.
    mutating func consumerLagging(_ lagging: Bool, at now: Instant) -> [Action] {
        guard lagging != liveness.consumerLags else {
            // The driver reports only changes of "some operation lags", which starts false as this does.
            assertionFailure("SocketStateMachine: consumerLagging(\(lagging)) repeats the current state")
            return []
        }
        let ready = if case .ready = phase { true } else { false }
        return liveness.consumerLagging(lagging, ready: ready, operations: live.count, at: now)
    }

    /// While reading is paused and other operations share the socket, the pause ends by
    /// ``Settings/maximumSharedPause`` (see there).
    private mutating func boundSharedPause(at now: Instant) -> [Action] {
        guard case .ready = phase else { return [] }
        return liveness.boundSharedPause(operations: live.count, at: now)
    }

    /// The time passed `now`: acknowledgement and keep-alive deadlines, pings, reconnect delays.
    mutating func tick(at now: Instant) -> [Action] {
        switch phase {
        case .opening(_, let deadline) where now >= deadline, .awaitingAck(_, let deadline) where now >= deadline:
            return lose(
                GQLError(.timeout, "the server did not acknowledge the connection within \(settings.ackTimeout)"),
                at: now, close: 4504)
        case .ready:
            if liveness.serverIsSilent(at: now) {
                let timeout = liveness.keepAliveTimeout
                return lose(
                    GQLError(.timeout, "the server was silent for longer than \(timeout)"), at: now, close: 4499)
            }
            return liveness.tick(at: now)
        case .waiting(let attempt, let until) where now >= until:
            return startAttempt(attempt, at: now)
        default:
            return []
        }
    }

    /// When ``tick(at:)`` next has something to do, or `nil` when only an event can change anything.
    var nextDeadline: Instant? {
        switch phase {
        case .opening(_, let deadline), .awaitingAck(_, let deadline): return deadline
        case .waiting(_, let until): return until
        case .ready: return liveness.nextDeadline
        default: return nil
        }
    }

    // MARK: - Helpers

    /// The live subscriptions the server has not acknowledged (`start_ack`) on the current socket: all of them while
    /// no socket is acknowledged. Only AppSync's protocol acknowledges a start; for the others this is every live
    /// subscription.
    var unacknowledgedSubscriptions: Set<String> {
        let ready = if case .ready = phase { true } else { false }
        let waiting = live.values.filter { $0.operation.isSubscription && !(ready && $0.acknowledged) }
        return Set(waiting.map(\.operation.id))
    }

    /// Live operations in the order they started (resent in that order).
    var operations: [Operation] {
        live.values.sorted { $0.started < $1.started }.map(\.operation)
    }

    private func sendStart(_ operation: Operation) -> Action {
        .send(operation.startMessage)
    }

    private mutating func startAttempt(_ attempt: Int, at now: Instant) -> [Action] {
        if attempt == 0 { backoff.reset() }
        generation += 1
        phase = .opening(attempt: attempt, deadline: now + settings.ackTimeout)
        liveness.socketOpening()
        return [.state(.connecting), .open(generation: generation), .reschedule]
    }

    /// The connection is gone but may come back: fail what cannot be resent, then wait or give up.
    private mutating func lose(_ error: GQLError, at now: Instant, close code: UInt16?) -> [Action] {
        // `attempt` counts the attempts since the last acknowledgement, for `maximumAttempts`: a server that
        // acknowledges and then drops every connection is never given up on. The delays keep growing for it
        // (the schedule starts over only after a connection that lasted a ping interval).
        let attempt: Int
        switch phase {
        case .opening(let current, _), .awaitingAck(let current, _): attempt = current + 1
        case .ready(_, let since):
            attempt = 1
            if now - since >= settings.pingInterval { backoff.reset() }
        default: attempt = 1
        }
        var actions: [Action] = code.map { [.close(code: $0, reason: error.message)] } ?? []
        generation += 1  // whatever the old socket still says is ignored
        if pendingConnects > 0 {
            pendingConnects = 0
            actions.append(.resumeConnects(error))
        }
        let singles = operations.filter { !$0.isSubscription }
        for single in singles { live[single.id] = nil }
        actions += singles.map { .finish(id: $0.id, .failed(error)) }

        guard !live.isEmpty || persistent else {
            phase = .idle
            return actions + [.state(.disconnected)]
        }
        if let maximum = settings.reconnect.maximumAttempts, attempt > maximum {
            let gaveUp = GQLError(
                error.code,
                maximum == 0
                    ? error.message : "gave up reconnecting after \(maximum) attempts; last: \(error.message)")
            return actions + fail(gaveUp, close: nil)
        }
        let delay = backoff.nextDelay()
        phase = .waiting(attempt: attempt, until: now + delay)
        return actions + [.state(.reconnecting(attempt: attempt, delay: delay)), .reschedule]
    }

    /// A refused authorization: reconnect at once, asking the provider for a fresh value, unless there is no
    /// provider or a retry started within a ping interval (`nil`). Every live operation, queries and mutations
    /// included (the server ran none of what it refused), is sent again after the next acknowledgement.
    private mutating func retryRefusedAuthorization(close code: UInt16?, reason: String = "", at now: Instant)
        -> [Action]?
    {
        guard settings.retriesRefusedAuthorization else { return nil }
        if let last = lastAuthorizationRetry, now - last < settings.pingInterval { return nil }
        lastAuthorizationRetry = now
        let attempt: Int
        switch phase {
        case .opening(let current, _), .awaitingAck(let current, _): attempt = current + 1
        default: attempt = 1
        }
        let close: [Action] = code.map { [.close(code: $0, reason: reason)] } ?? []
        let actions = close + startAttempt(attempt, at: now)
        authorizationRetryGeneration = generation
        return actions
    }

    /// Closes a connection nothing uses any more: no operation left and no `connect()` holding it (like graphql-ws's
    /// lazy mode; servers such as AppSync count connected time).
    private mutating func closeIfUnused() -> [Action] {
        guard live.isEmpty, !persistent, pendingConnects == 0 else { return [] }
        switch phase {
        case .ready:
            generation += 1
            phase = .idle
            var actions: [Action] = settings.codec.terminate.map { [.send($0)] } ?? []
            actions += [.close(code: 1000, reason: "no more operations"), .state(.disconnected)]
            return actions
        case .waiting:
            phase = .idle
            return [.state(.disconnected)]
        default:
            return []
        }
    }

    /// The connection ends for good: every operation and waiting `connect()` gets `error`.
    private mutating func fail(_ error: GQLError, close code: UInt16?) -> [Action] {
        var actions: [Action] = code.map { [.close(code: $0, reason: error.message)] } ?? []
        generation += 1
        actions += endAll(.failed(error))
        if pendingConnects > 0 {
            pendingConnects = 0
            actions.append(.resumeConnects(error))
        }
        persistent = false
        phase = .failed(error)
        actions.append(.state(.failed(error)))
        return actions
    }

    private mutating func endAll(_ ending: Ending) -> [Action] {
        defer { live.removeAll() }
        return operations.map { .finish(id: $0.id, ending) }
    }
}
