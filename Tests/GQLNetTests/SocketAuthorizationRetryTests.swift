import GQLCore
import Testing

@testable import GQLNet

/// The socket state machine's single retry after a refused authorization, driven by hand: no sockets, no sleeping.
@Suite("Socket state machine: refused authorization")
struct SocketAuthorizationRetryTests {
    typealias Action = SocketStateMachine.Action
    let t0 = ContinuousClock.now

    static func machine(_ kind: GQLServer.WebSocketProtocol = .graphqlTransportWS, provider: Bool = true)
        -> SocketStateMachine
    {
        var settings = SocketStateMachine.Settings(
            codec: SocketCodec(kind: kind), ackTimeout: .seconds(10), pingInterval: .seconds(15),
            keepAliveTimeout: .seconds(30), reconnect: .init())
        settings.retriesRefusedAuthorization = provider
        return SocketStateMachine(settings: settings, random: { 1 })
    }

    static func operation(_ id: String, subscription: Bool) -> SocketStateMachine.Operation {
        .init(id: id, startMessage: ["type": "subscribe", "id": .string(id)], isSubscription: subscription)
    }

    /// A machine with subscription "s" and query "q" started and socket 1 acknowledged.
    func connected(_ kind: GQLServer.WebSocketProtocol = .graphqlTransportWS) -> SocketStateMachine {
        var machine = Self.machine(kind)
        _ = machine.start(Self.operation("s", subscription: true), at: t0)
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        _ = machine.start(Self.operation("q", subscription: false), at: t0)
        return machine
    }

    @Test func aClose4401ReconnectsAtOnceAndKeepsEveryOperation() {
        var machine = connected()
        let actions = machine.socketClosed(1, code: 4401, reason: "Unauthorized: the token expired", at: t0)
        #expect(actions == [.state(.connecting), .open(generation: 2), .reschedule])
        #expect(machine.authorizationRetryGeneration == 2)
        _ = machine.socketOpened(2, at: t0)
        let resent = machine.received(.ack(keepAliveTimeout: nil), on: 2, at: t0)
        #expect(resent.contains(.send(["type": "subscribe", "id": "s"])))
        #expect(resent.contains(.send(["type": "subscribe", "id": "q"])))
        #expect(machine.authorizationRetryGeneration == nil)
    }

    @Test func aSecondRefusalWithinAPingIntervalIsFinal() {
        var machine = connected()
        _ = machine.socketClosed(1, code: 4403, reason: "Forbidden", at: t0)
        let actions = machine.socketClosed(2, code: 4401, reason: "Unauthorized", at: t0 + .seconds(1))
        guard case .failed(let error) = machine.phase else {
            Issue.record("the second refusal did not fail the connection")
            return
        }
        #expect(error.code == .unauthorized)
        #expect(actions.contains(.finish(id: "s", .failed(error))))
        #expect(actions.contains(.finish(id: "q", .failed(error))))
    }

    @Test func aRefusalLongAfterTheLastRetryIsRetriedAgain() {
        var machine = connected()
        _ = machine.socketClosed(1, code: 4401, reason: "", at: t0)
        _ = machine.socketOpened(2, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 2, at: t0)
        let later = t0 + .seconds(3600)
        #expect(
            machine.socketClosed(2, code: 4401, reason: "", at: later) == [
                .state(.connecting), .open(generation: 3), .reschedule,
            ])
    }

    @Test func anUpgradeRefusedWith401AndAConnectionErrorAreRetried() {
        var machine = Self.machine()
        _ = machine.start(Self.operation("s", subscription: true), at: t0)
        let refused = GQLError(.unauthorized, "HTTP 401", httpStatus: 401)
        #expect(
            machine.socketClosed(1, code: nil, reason: nil, error: refused, at: t0) == [
                .state(.connecting), .open(generation: 2), .reschedule,
            ])

        var legacy = Self.machine(.graphqlWS)
        _ = legacy.start(Self.operation("s", subscription: true), at: t0)
        _ = legacy.socketOpened(1, at: t0)
        let actions = legacy.received(.connectionError(["message": "Unauthorized"]), on: 1, at: t0)
        #expect(
            actions.first == .close(code: 4403, reason: "the server refused the WebSocket connection: Unauthorized"))
        #expect(actions.contains(.open(generation: 2)))
    }

    @Test func appSyncUnauthorizedStartReconnectsAndResendsIt() {
        var machine = connected(.appSync)
        let errors: [GQLValue] = [["errorType": "UnauthorizedException", "message": "Permission denied"]]
        let actions = machine.received(.error(id: "q", errors), on: 1, at: t0)
        #expect(
            actions == [
                .close(code: 1000, reason: "authorization refused"), .state(.connecting), .open(generation: 2),
                .reschedule,
            ])
        // Another kind of error still ends only its operation.
        var other = connected(.appSync)
        let refused = other.received(.error(id: "q", [["errorType": "ValidationError"]]), on: 1, at: t0)
        #expect(refused == [.finish(id: "q", .rejected([["errorType": "ValidationError"]]))])
    }

    @Test func withoutAProviderRefusalsEndForGood() {
        var machine = Self.machine(provider: false)
        _ = machine.start(Self.operation("s", subscription: true), at: t0)
        _ = machine.socketOpened(1, at: t0)
        _ = machine.received(.ack(keepAliveTimeout: nil), on: 1, at: t0)
        _ = machine.socketClosed(1, code: 4401, reason: "", at: t0)
        guard case .failed = machine.phase else {
            Issue.record("a refusal without a provider was retried")
            return
        }
        #expect(machine.authorizationRetryGeneration == nil)
    }
}
