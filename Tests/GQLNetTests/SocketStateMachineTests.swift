import Testing

@testable import GQLNet

/// The WebSocket connection's decisions, driven by hand with a fixed start instant: no sockets, no sleeping.
@Suite("Socket state machine")
struct SocketStateMachineTests {
    typealias Action = SocketStateMachine.Action
    let t0 = ContinuousClock.now

    static func machine(
        _ kind: GQLServer.WebSocketProtocol = .graphqlTransportWS, reconnect: GQLServer.Reconnect = .init(),
        random: Double = 1
    ) -> SocketStateMachine {
        SocketStateMachine(
            settings: .init(
                codec: SocketCodec(kind: kind), ackTimeout: .seconds(10), pingInterval: .seconds(15),
                keepAliveTimeout: .seconds(30), reconnect: reconnect),
            random: { random })
    }

    static func subscription(_ id: String) -> SocketStateMachine.Operation {
        .init(id: id, startMessage: ["type": "subscribe", "id": .string(id)], isSubscription: true)
    }

    static func query(_ id: String) -> SocketStateMachine.Operation {
        .init(id: id, startMessage: ["type": "subscribe", "id": .string(id)], isSubscription: false)
    }

    /// A machine with subscription "1" started and the connection acknowledged on socket 1.
    func connected(_ kind: GQLServer.WebSocketProtocol = .graphqlTransportWS) -> SocketStateMachine {
        var machine = Self.machine(kind)
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        return machine
    }

    @Test func firstOperationOpensASocketAndIsSentAfterTheAck() {
        var machine = Self.machine()
        #expect(
            machine.start(Self.subscription("1"), at: t0) == [.state(.connecting), .open(generation: 1), .reschedule])
        #expect(machine.start(Self.subscription("2"), at: t0) == [])
        #expect(machine.socketOpened(1, at: t0) == [])
        #expect(
            machine.received(.ack(keepAliveTimeout: nil), on: 1, at: t0) == [
                .state(.connected), .resumeConnects(nil), .reschedule,
                .send(["type": "subscribe", "id": "1"]), .send(["type": "subscribe", "id": "2"]),
            ])
        #expect(machine.start(Self.subscription("3"), at: t0) == [.send(["type": "subscribe", "id": "3"])])
        #expect(machine.publicState == .connected)
    }

    /// `start_ack` (AppSync) marks a subscription started on the current socket; a new socket starts it again.
    @Test func startAcksCountOnTheCurrentSocketOnly() {
        var machine = Self.machine(.appSync)
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.start(Self.query("q"), at: t0)
        #expect(machine.unacknowledgedSubscriptions == ["1"])  // no socket yet; queries are never waited for
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        #expect(machine.unacknowledgedSubscriptions == ["1"])
        #expect(machine.received(.startAck(id: "1"), on: 1, at: t0) == [.startAcknowledged(id: "1")])
        #expect(machine.received(.startAck(id: "q"), on: 1, at: t0) == [])
        #expect(machine.unacknowledgedSubscriptions.isEmpty)
        _ = machine.socketClosed(1, code: 1006, reason: nil, at: t0)
        #expect(machine.unacknowledgedSubscriptions == ["1"])  // lost with its socket
        _ = machine.tick(at: t0 + .seconds(60))
        let socket = machine.generation
        _ = machine.socketOpened(socket, at: t0 + .seconds(60))
        _ = machine.received(.ack(keepAliveTimeout: nil), on: socket, at: t0 + .seconds(60))
        #expect(machine.unacknowledgedSubscriptions == ["1"])
        #expect(
            machine.received(.startAck(id: "1"), on: socket, at: t0 + .seconds(60)) == [.startAcknowledged(id: "1")])
        #expect(machine.unacknowledgedSubscriptions.isEmpty)
    }

    @Test func resultsAreRoutedAndQueriesEndAfterOneResult() {
        var machine = connected()
        _ = machine.start(Self.query("q"), at: t0)
        #expect(machine.received(.next(id: "1", ["data": 1]), on: 1, at: t0) == [.deliver(id: "1", ["data": 1])])
        #expect(
            machine.received(.next(id: "q", ["data": 2]), on: 1, at: t0) == [
                .deliver(id: "q", ["data": 2]), .finish(id: "q", .completed),
            ])
        #expect(machine.received(.complete(id: "q"), on: 1, at: t0) == [])
        #expect(machine.received(.next(id: "unknown", ["data": 3]), on: 1, at: t0) == [])
        #expect(
            machine.received(.error(id: "1", [["message": "bad"]]), on: 1, at: t0) == [
                .finish(id: "1", .rejected([["message": "bad"]])), .close(code: 1000, reason: "no more operations"),
                .state(.disconnected),
            ])
        #expect(machine.operations.isEmpty)
    }

    @Test func stoppingTheLastOperationClosesAnUnusedConnection() {
        var transport = connected(.graphqlTransportWS)
        #expect(
            transport.stop(id: "1") == [
                .send(["type": "complete", "id": "1"]), .close(code: 1000, reason: "no more operations"),
                .state(.disconnected),
            ])
        #expect(transport.stop(id: "1") == [])
        #expect(transport.phase == .idle)
        var legacy = connected(.graphqlWS)
        #expect(
            legacy.stop(id: "1") == [
                .send(["type": "stop", "id": "1"]), .send(["type": "connection_terminate"]),
                .close(code: 1000, reason: "no more operations"), .state(.disconnected),
            ])
        // After connect(), the connection stays up without operations.
        var kept = connected(.graphqlTransportWS)
        #expect(kept.connectRequested(at: t0) == [.resumeConnects(nil)])
        #expect(kept.stop(id: "1") == [.send(["type": "complete", "id": "1"])])
        #expect(kept.phase == .ready(attempt: 0, since: t0))
    }

    @Test func serverPingsGetPongsWithTheirPayload() {
        var machine = connected()
        #expect(machine.received(.ping(["n": 1]), on: 1, at: t0) == [.pong(["type": "pong", "payload": ["n": 1]])])
        #expect(machine.received(.ping(nil), on: 1, at: t0) == [.pong(["type": "pong"])])
    }

    @Test func idleConnectionPingsAndDropsWhenThePongNeverComes() {
        var machine = connected()
        #expect(machine.nextDeadline == t0 + .seconds(15))
        #expect(machine.tick(at: t0 + .seconds(14)) == [])
        #expect(machine.tick(at: t0 + .seconds(15)) == [.send(["type": "ping"]), .reschedule])
        #expect(machine.nextDeadline == t0 + .seconds(45))
        // A pong (any message) clears the deadline.
        _ = machine.received(.pong, on: 1, at: t0 + .seconds(16))
        #expect(machine.nextDeadline == t0 + .seconds(31))
        _ = machine.tick(at: t0 + .seconds(31))
        let actions = machine.tick(at: t0 + .seconds(61))
        #expect(actions.first == .close(code: 4499, reason: "the server was silent for longer than 30.0 seconds"))
        #expect(actions.contains(.state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
        #expect(machine.phase == .waiting(attempt: 1, until: t0 + .seconds(61) + .milliseconds(500)))
    }

    /// A server that floods pings and never reads our ping is not alive: its pings do not clear the deadline.
    @Test func serverPingsAndUnknownMessagesAreNotActivity() {
        var machine = connected()
        #expect(machine.tick(at: t0 + .seconds(15)) == [.send(["type": "ping"]), .reschedule])
        for second in 16...44 {
            #expect(machine.received(.ping(nil), on: 1, at: t0 + .seconds(second)) == [.pong(["type": "pong"])])
            _ = machine.received(.unknown("flood"), on: 1, at: t0 + .seconds(second))
        }
        #expect(machine.nextDeadline == t0 + .seconds(45))
        let actions = machine.tick(at: t0 + .seconds(45))
        #expect(actions.first == .close(code: 4499, reason: "the server was silent for longer than 30.0 seconds"))
        // Legacy: a flood of unknown messages does not stand in for `ka` either.
        var legacy = connected(.graphqlWS)
        _ = legacy.received(.keepAlive, on: 1, at: t0)
        for second in 1...29 { _ = legacy.received(.unknown("x"), on: 1, at: t0 + .seconds(second)) }
        #expect(legacy.nextDeadline == t0 + .seconds(30))
    }

    /// While the caller lags behind the results the socket is not read, so silence is ours: no ping, no timeout;
    /// the idle time starts over when it caught up.
    @Test func aLaggingConsumerPausesReadingAndTheKeepAlive() {
        var machine = connected()
        #expect(machine.consumerLagging(true, at: t0 + .seconds(1)) == [.reading(paused: true)])
        #expect(machine.nextDeadline == nil)
        #expect(machine.tick(at: t0 + .seconds(100)) == [])
        #expect(machine.consumerLagging(false, at: t0 + .seconds(100)) == [.reading(paused: false), .reschedule])
        #expect(machine.nextDeadline == t0 + .seconds(115))
        // Lagging across a reconnect: the new socket pauses once acknowledged.
        _ = machine.consumerLagging(true, at: t0 + .seconds(101))
        _ = machine.socketClosed(1, code: 1001, reason: nil, at: t0 + .seconds(102))
        _ = machine.tick(at: t0 + .seconds(103))
        let socket = machine.generation
        _ = machine.socketOpened(socket, at: t0 + .seconds(103))
        let ack = machine.received(.ack(keepAliveTimeout: nil), on: socket, at: t0 + .seconds(103))
        #expect(ack.contains(.reading(paused: true)), "\(ack)")
        #expect(machine.nextDeadline == nil)
    }

    /// With other operations on the socket, their results wait behind the paused reads (a caller may await one of
    /// them before it drains the lagging one): the pause ends after `maximumSharedPause`, and reading stays on
    /// until the caller catches up. One operation alone keeps the socket paused.
    @Test func aPauseSharedWithOtherOperationsEnds() {
        var machine = connected()
        _ = machine.start(Self.subscription("2"), at: t0)
        #expect(machine.consumerLagging(true, at: t0 + .seconds(1)) == [.reading(paused: true), .reschedule])
        #expect(machine.nextDeadline == t0 + .seconds(3))
        #expect(machine.tick(at: t0 + .seconds(2)) == [])
        #expect(machine.tick(at: t0 + .seconds(3)) == [.reading(paused: false), .reschedule])
        // Reading goes on and the keep-alive runs again from now.
        #expect(machine.nextDeadline == t0 + .seconds(18))
        // Caught up: nothing to resume; lagging again pauses again, bounded again.
        #expect(machine.consumerLagging(false, at: t0 + .seconds(4)) == [])
        #expect(machine.consumerLagging(true, at: t0 + .seconds(5)) == [.reading(paused: true), .reschedule])
        #expect(machine.consumerLagging(false, at: t0 + .seconds(6)) == [.reading(paused: false), .reschedule])

        // One operation: paused until the caller catches up; a query started meanwhile bounds the pause.
        var alone = connected()
        #expect(alone.consumerLagging(true, at: t0 + .seconds(1)) == [.reading(paused: true)])
        #expect(alone.nextDeadline == nil)
        let started = alone.start(Self.query("3"), at: t0 + .seconds(10))
        #expect(started.contains(.reschedule), "\(started)")
        #expect(alone.nextDeadline == t0 + .seconds(12))
        #expect(alone.tick(at: t0 + .seconds(12)) == [.reading(paused: false), .reschedule])
    }

    @Test func legacyKeepAliveTimesOutOnlyAfterTheFirstKa() {
        var machine = connected(.graphqlWS)
        #expect(machine.nextDeadline == nil)
        #expect(machine.tick(at: t0 + .seconds(120)) == [])
        _ = machine.received(.keepAlive, on: 1, at: t0 + .seconds(120))
        #expect(machine.nextDeadline == t0 + .seconds(150))
        #expect(
            machine.tick(at: t0 + .seconds(150)).contains(.state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
    }

    @Test func appSyncTakesTheKeepAliveTimeoutFromTheAck() {
        var machine = Self.machine(.appSync)
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: .seconds(5)), on: 1, at: t0)
        #expect(machine.nextDeadline == t0 + .seconds(5))
        _ = machine.received(.keepAlive, on: 1, at: t0 + .seconds(1))
        #expect(machine.nextDeadline == t0 + .seconds(6))
    }

    @Test func missingAckTimesOutAndRetries() {
        var machine = Self.machine()
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketOpened(1, at: t0)
        #expect(machine.nextDeadline == t0 + .seconds(10))
        let actions = machine.tick(at: t0 + .seconds(10))
        #expect(
            actions.first
                == .close(code: 4504, reason: "the server did not acknowledge the connection within 10.0 seconds"))
        #expect(actions.contains(.state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
    }

    @Test func lostConnectionResubscribesAfterTheDelayAndFailsQueries() {
        var machine = connected()
        _ = machine.start(Self.query("q"), at: t0)
        let lost = machine.socketClosed(1, code: 1001, reason: "going away", at: t0)
        #expect(
            lost.contains(
                .finish(id: "q", .failed(GQLError(.connection, "the WebSocket closed (code 1001: going away)")))))
        #expect(lost.contains(.state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
        #expect(machine.operations.map(\.id) == ["1"])
        // Messages from the old socket are ignored from now on.
        #expect(machine.received(.next(id: "1", ["data": 1]), on: 1, at: t0) == [])
        #expect(machine.tick(at: t0 + .milliseconds(499)) == [])
        #expect(machine.tick(at: t0 + .milliseconds(500)) == [.state(.connecting), .open(generation: 3), .reschedule])
        _ = machine.socketOpened(3, at: t0 + .seconds(1))
        #expect(
            machine.received(.ack(keepAliveTimeout: nil), on: 3, at: t0 + .seconds(1)).contains(
                .send(["type": "subscribe", "id": "1"])))
    }

    @Test func delaysGrowExponentiallyWithJitterUpToTheMaximum() {
        let reconnect = GQLServer.Reconnect(initialDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(reconnect.delay(attempt: 1, random: 1) == .milliseconds(100))
        #expect(reconnect.delay(attempt: 1, random: 0) == .milliseconds(50))
        #expect(reconnect.delay(attempt: 3, random: 1) == .milliseconds(400))
        #expect(reconnect.delay(attempt: 3, random: 0.5) == .milliseconds(300))
        #expect(reconnect.delay(attempt: 30, random: 1) == .seconds(1))
    }

    @Test func unauthorizedCloseCodesAndConnectionErrorsEndForGood() {
        for code: UInt16 in [4401, 4403] {
            var machine = connected()
            let actions = machine.socketClosed(1, code: code, reason: "Forbidden", at: t0)
            guard case .failed(let error) = machine.phase else {
                Issue.record("close \(code) did not fail the connection")
                continue
            }
            #expect(error.code == .unauthorized)
            #expect(actions.contains(.finish(id: "1", .failed(error))))
            #expect(machine.tick(at: t0 + .seconds(60)) == [])
        }
        var machine = Self.machine(.appSync)
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketOpened(1, at: t0)
        let payload: GQLValue = ["errors": [["errorType": "UnauthorizedException", "message": "Permission denied"]]]
        let actions = machine.received(.connectionError(payload), on: 1, at: t0)
        let error = GQLError(
            .unauthorized, "the server refused the WebSocket connection: UnauthorizedException: Permission denied")
        #expect(actions.first == .close(code: 4403, reason: error.message))
        #expect(actions.contains(.resumeConnects(nil)) == false)
        #expect(machine.phase == .failed(error))
    }

    @Test func attemptsAreBoundedWhenConfigured() {
        var machine = Self.machine(reconnect: .init(maximumAttempts: 1))
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketClosed(1, code: nil, reason: nil, error: GQLError(.connection, "refused"), at: t0)
        #expect(machine.phase == .waiting(attempt: 1, until: t0 + .milliseconds(500)))
        #expect(machine.tick(at: t0 + .seconds(1)) == [.state(.connecting), .open(generation: 3), .reschedule])
        let actions = machine.socketClosed(3, code: nil, reason: nil, error: GQLError(.connection, "refused"), at: t0)
        let error = GQLError(.connection, "gave up reconnecting after 1 attempts; last: refused")
        #expect(actions.contains(.finish(id: "1", .failed(error))))
        #expect(machine.phase == .failed(error))
        var never = Self.machine(reconnect: .never)
        _ = never.start(Self.subscription("1"), at: t0)
        _ = never.socketClosed(1, code: nil, reason: nil, error: GQLError(.connection, "refused"), at: t0)
        #expect(never.phase == .failed(GQLError(.connection, "refused")))
    }

    @Test func connectWaitsForTheAckAndFailsFastWithoutSubscriptions() {
        var machine = Self.machine()
        #expect(machine.connectRequested(at: t0) == [.state(.connecting), .open(generation: 1), .reschedule])
        let error = GQLError(.connection, "refused")
        #expect(
            machine.socketClosed(1, code: nil, reason: nil, error: error, at: t0) == [
                .resumeConnects(error), .state(.disconnected),
            ])
        // A successful connect keeps the connection up without subscriptions.
        #expect(machine.connectRequested(at: t0) == [.state(.connecting), .open(generation: 3), .reschedule])
        _ = machine.socketOpened(3, at: t0)
        #expect(machine.received(.ack(keepAliveTimeout: nil), on: 3, at: t0).contains(.resumeConnects(nil)))
        #expect(machine.connectRequested(at: t0) == [.resumeConnects(nil)])
        #expect(
            machine.socketClosed(3, code: 1006, reason: nil, at: t0).contains(
                .state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
    }

    /// A `connect()` whose task is cancelled before the acknowledgement no longer holds the connection: alone, the
    /// socket closes at once; beside an operation or another waiting `connect()`, it stays, and only a `connect()`
    /// still waiting at the acknowledgement makes it persistent.
    @Test func aCancelledConnectNoLongerHoldsTheConnection() {
        var alone = Self.machine()
        _ = alone.connectRequested(at: t0)
        #expect(
            alone.connectWithdrawn() == [.close(code: 1000, reason: "connect() was cancelled"), .state(.disconnected)])
        #expect(alone.phase == .idle)
        #expect(alone.received(.ack(keepAliveTimeout: nil), on: 1, at: t0) == [])
        #expect(alone.connectWithdrawn() == [])

        // Withdrawn after the socket opened: the acknowledgement that comes anyway is for a socket already closed.
        var opened = Self.machine()
        _ = opened.connectRequested(at: t0)
        _ = opened.socketOpened(1, at: t0)
        #expect(
            opened.connectWithdrawn() == [.close(code: 1000, reason: "connect() was cancelled"), .state(.disconnected)])
        #expect(opened.received(.ack(keepAliveTimeout: nil), on: 1, at: t0) == [])

        // Another connect() still waits: it gets the acknowledgement, and the connection stays up.
        var two = Self.machine()
        _ = two.connectRequested(at: t0)
        _ = two.connectRequested(at: t0)
        #expect(two.connectWithdrawn() == [])
        _ = two.socketOpened(1, at: t0)
        _ = two.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        #expect(two.connectRequested(at: t0) == [.resumeConnects(nil)])
        _ = two.start(Self.subscription("1"), at: t0)
        #expect(two.stop(id: "1") == [.send(["type": "complete", "id": "1"])])
        #expect(two.phase == .ready(attempt: 0, since: t0))

        // A subscription uses the socket: it stays until the subscription ends, which then closes it (the
        // cancelled connect() does not keep it up).
        var used = Self.machine()
        _ = used.connectRequested(at: t0)
        _ = used.start(Self.subscription("1"), at: t0)
        #expect(used.connectWithdrawn() == [])
        _ = used.socketOpened(1, at: t0)
        _ = used.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        #expect(
            used.stop(id: "1") == [
                .send(["type": "complete", "id": "1"]), .close(code: 1000, reason: "no more operations"),
                .state(.disconnected),
            ])
    }

    @Test func disconnectCompletesSubscriptionsFailsQueriesAndClosesPolitely() {
        var machine = connected(.graphqlWS)
        _ = machine.start(Self.query("q"), at: t0)
        #expect(
            machine.disconnectRequested() == [
                .finish(id: "1", .completed),
                .finish(id: "q", .failed(GQLError(.closed, "the connection was closed by disconnect() or shutdown()"))),
                .send(["type": "connection_terminate"]), .close(code: 1000, reason: "client disconnect"),
                .state(.disconnected),
            ])
        // The old socket's last words are ignored.
        #expect(machine.received(.connectionError(["message": "late"]), on: 1, at: t0) == [])
        #expect(machine.socketClosed(1, code: 1000, reason: nil, at: t0) == [])
        #expect(machine.phase == .idle)
        #expect(machine.tick(at: t0 + .seconds(100)) == [])
    }

    @Test func protocolErrorsFromTheServerAreNotRetried() {
        var machine = connected()
        _ = machine.socketClosed(1, code: 4400, reason: "Invalid message", at: t0)
        #expect(
            machine.phase
                == .failed(
                    GQLError(
                        .connection, "the server closed the WebSocket for a protocol error (4400: Invalid message)")))
        // A new subscription starts over.
        #expect(
            machine.start(Self.subscription("2"), at: t0) == [.state(.connecting), .open(generation: 3), .reschedule])
    }

    @Test func aSocketThatNeverOpensTimesOutLikeAMissingAck() {
        var machine = Self.machine()
        _ = machine.start(Self.subscription("1"), at: t0)
        // Still opening (the upgrade never answered): the acknowledgement deadline already runs.
        #expect(machine.nextDeadline == t0 + .seconds(10))
        let actions = machine.tick(at: t0 + .seconds(10))
        #expect(actions.contains(.state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
        #expect(machine.socketOpened(1, at: t0 + .seconds(11)) == [])
    }

    @Test func aServerThatDropsEveryConnectionGetsGrowingDelays() {
        var machine = Self.machine()
        _ = machine.start(Self.subscription("1"), at: t0)
        var now = t0
        var delays: [Duration] = []
        for generation in stride(from: 1, through: 7, by: 2) {
            _ = machine.socketOpened(generation, at: now)
            _ = machine.received(.ack(keepAliveTimeout: nil), on: generation, at: now)
            // Dropped right after the ack, long before a ping interval.
            for case .state(.reconnecting(_, let delay)) in machine.socketClosed(
                generation, code: 1011, reason: nil, at: now)
            {
                delays.append(delay)
            }
            now = now + .seconds(60)
            _ = machine.tick(at: now)
        }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)])
        // A connection that lasted a ping interval starts over.
        _ = machine.socketOpened(9, at: now)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 9, at: now)
        #expect(
            machine.socketClosed(9, code: 1011, reason: nil, at: now + .seconds(15)).contains(
                .state(.reconnecting(attempt: 1, delay: .milliseconds(500)))))
    }

    /// A server that acknowledges and then drops every connection is retried for ever, with delays that grow to
    /// the cap; only attempts that fail before an acknowledgement count against `maximumAttempts`.
    @Test func aFlappingServerIsNeverGivenUpButFailedAttemptsInARowAre() {
        let reconnect = GQLServer.Reconnect(maximumDelay: .seconds(4), maximumAttempts: 2)
        var machine = Self.machine(reconnect: reconnect)
        _ = machine.start(Self.subscription("1"), at: t0)
        var now = t0
        var generation = 1
        var seen: [GQLServer.ConnectionState] = []
        for _ in 0..<8 {
            _ = machine.socketOpened(generation, at: now)
            _ = machine.received(.ack(keepAliveTimeout: nil), on: generation, at: now)
            for case .state(let state) in machine.socketClosed(
                generation, code: 1011, reason: nil, at: now + .seconds(1))
            {
                seen.append(state)
            }
            now = now + .seconds(60)
            _ = machine.tick(at: now)
            generation += 2
        }
        let delays: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)]
        #expect(seen == (delays + [.seconds(4), .seconds(4)]).map { .reconnecting(attempt: 1, delay: $0) })
        // Now two attempts in a row fail before an acknowledgement: the second gives up.
        let refused = GQLError(.connection, "cannot connect: connection refused")
        #expect(
            machine.socketClosed(generation, code: nil, reason: nil, error: refused, at: now).contains(
                .state(.reconnecting(attempt: 2, delay: .seconds(4)))))
        _ = machine.tick(at: now + .seconds(60))
        generation += 2
        _ = machine.socketClosed(generation, code: nil, reason: nil, error: refused, at: now + .seconds(60))
        #expect(
            machine.phase
                == .failed(GQLError(.connection, "gave up reconnecting after 2 attempts; last: \(refused.message)")))
    }

    /// An upgrade refused with 401/403/404 is the server's final answer; 503 or 429 may pass.
    @Test func refusedUpgradesEndForGoodUnlessTheStatusMayChange() {
        for (status, permanent) in [(403, true), (401, true), (404, true), (429, false), (503, false)] {
            var machine = connected()
            let code: GQLError.Code = status == 401 || status == 403 ? .unauthorized : .http
            let error = GQLError(code, "WebSocket upgrade refused: HTTP \(status)", httpStatus: status)
            _ = machine.socketClosed(1, code: 1006, reason: nil, at: t0)
            _ = machine.tick(at: t0 + .seconds(60))
            _ = machine.socketClosed(3, code: nil, reason: nil, error: error, at: t0 + .seconds(60))
            if permanent {
                #expect(machine.phase == .failed(error), "HTTP \(status)")
            } else {
                #expect(machine.publicState == .reconnecting(attempt: 2, delay: .zero), "HTTP \(status)")
            }
        }
    }

    @Test func invalidOrOversizedMessagesEndTheConnectionWithTheirError() {
        var machine = connected()
        let tooLarge = GQLError(.responseTooLarge, "too large")
        let actions = machine.receivedInvalid(tooLarge, on: 1, at: t0)
        #expect(actions.first == .close(code: 1009, reason: "too large"))
        #expect(actions.contains(.finish(id: "1", .failed(tooLarge))))
        #expect(machine.phase == .failed(tooLarge))
        var garbled = connected()
        _ = garbled.receivedInvalid(GQLError(.invalidResponse, "not JSON"), on: 1, at: t0)
        #expect(garbled.phase == .failed(GQLError(.invalidResponse, "not JSON")))
    }

    @Test func appSyncTimeoutsBelowASecondAreRaised() {
        var machine = Self.machine(.appSync)
        _ = machine.start(Self.subscription("1"), at: t0)
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: .zero), on: 1, at: t0)
        #expect(machine.nextDeadline == t0 + .seconds(1))
    }

    #if DEBUG
        /// What only a bug in the driver can cause traps in debug builds (each in a child process): a second open
        /// report for the current socket, a lag report that repeats the current state.
        @Test func impossibleReportsTrapInDebugBuilds() async {
            await #expect(processExitsWith: .failure) {
                var machine = SocketStateMachineTests().connected()
                _ = machine.socketOpened(machine.generation, at: .now)
            }
            await #expect(processExitsWith: .failure) {
                var machine = SocketStateMachineTests().connected()
                _ = machine.consumerLagging(false, at: .now)
            }
        }
    #endif
}
