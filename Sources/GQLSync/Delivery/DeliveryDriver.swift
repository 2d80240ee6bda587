import GQLCache
import GQLCore
import GQLNet
import GQLStore

/// Carries out what ``DeliveryStateMachine`` decides: reads the outbox, sends items, settles them, sleeps, and
/// publishes statuses. It keeps no decision of its own.
final class DeliveryDriver: Sendable {
    struct State {
        var machine: DeliveryStateMachine
        var pending: Int
        var failed: Int
        var sent = 0
        var drainWaiters = GQLWaiters<Void, any Error>()
        /// Set when the loop ended: why (`nil` reason: a shutdown).
        var stopped: GQLError?
    }

    let outbox: OutboxStore
    let server: GQLServer
    let idempotencyHeader: String?
    let conflicts: ConflictHandler
    let answers: AnswerWriter
    /// The optimistic answers of items, over ``GQLSync/Configuration/cache`` (`nil` without a cache).
    let layers: OutboxLayers?
    let state: GQLLocked<State>
    let signal = WakeSignal()
    let statuses = StatusBroadcaster()
    /// The start of each operation's request body, made once.
    let bodies = RequestBody.Prefixes()

    init(
        outbox: OutboxStore, server: GQLServer, settings: DeliveryStateMachine.Settings,
        configuration: GQLSync.Configuration, conflicts: ConflictHandler
    ) throws {
        self.outbox = outbox
        self.server = server
        self.conflicts = conflicts
        answers = AnswerWriter(store: conflicts.store, outbox: outbox)
        layers = try configuration.cache.map { try OutboxLayers(cache: $0, outbox: outbox) }
        // Per-call headers cannot travel over a WebSocket-only server.
        self.idempotencyHeader = server.url == nil ? nil : configuration.idempotencyHeader
        let counts = try outbox.counts()
        let machine = DeliveryStateMachine(settings: settings, random: configuration.random)
        state = GQLLocked(State(machine: machine, pending: counts.pending, failed: counts.failed))
    }

    // MARK: The loop

    /// Runs until ``stop()``; items left over from an earlier run are delivered first.
    func run() async {
        var removals: [Int64] = []
        var setAside: [(Int64, GQLSync.Failure)] = []
        while true {
            let step = state.withLock { $0.machine.next(now: .now) }
            switch step {
            case .stop:
                // Record what was settled since the last claim, so a delivered item is not sent again by the
                // next engine on this outbox.
                try? await outbox.settle(remove: removals, setAside: setAside)
                return
            case .sleep:
                await signal.wait(until: nil)
            case .wait(let until):
                await signal.wait(until: until)
            case .claim(let limit):
                do {
                    let claimed = try await outbox.advance(remove: removals, setAside: setAside, claim: limit)
                    removals = []
                    setAside = []
                    try await settle(claimed, removals: &removals, setAside: &setAside)
                } catch {
                    if (error as? GQLError)?.code == .closed {
                        stopAfterFailure(error)
                        return
                    }
                    update(nil) { $0.machine.claimFailed(now: .now) }
                    if let delay = state.withLock({ $0.machine.lastDelay }) {
                        publish(.claimFailed(delay: delay, GQLSync.Failure(message: "\(error)")))
                    }
                }
            }
        }
    }

    /// Sends the claimed items and records what the state machine decided for each.
    private func settle(
        _ items: [OutboxItem], removals: inout [Int64], setAside: inout [(Int64, GQLSync.Failure)]
    ) async throws {
        let ids = items.map(\.id)
        let drained = update(ids.isEmpty ? nil : .sending(ids: ids)) { $0.machine.claimed(ids) }
        if drained {
            let resumption = state.withLock { $0.drainWaiters.resumeAll(with: .success(())) }
            publish(.drained)
            resumption.run()
        }
        guard !items.isEmpty else { return }
        let results = await send(items)
        // At most a batch: a look-up by id is a short scan (an index, not a copy of the item).
        let byID = { (id: Int64) in items.firstIndex { $0.id == id } }
        let decisions = update(nil) { $0.machine.sent(results, now: .now) }
        for decision in decisions {
            switch decision {
            case .remove(let id):
                if answers.store != nil, let index = byID(id), let sent = results.first(where: { $0.id == id }),
                    case .delivered(let result) = sent.outcome
                {
                    await answers.write(items[index], result)
                }
                if let layers, let sent = results.first(where: { $0.id == id }) {
                    if case .delivered(let result) = sent.outcome, let index = byID(id) {
                        await layers.delivered(items[index], result)
                    } else {
                        await layers.rolledBack(id)
                    }
                }
                removals.append(id)
                update(.sent(id: id, name: byID(id).map { items[$0].name } ?? "")) {
                    $0.pending -= 1
                    $0.sent += 1
                }
            case .setAside(let id, let failure):
                layers?.setAside(id)
                setAside.append((id, failure))
                update(.failed(id: id, failure)) {
                    $0.pending -= 1
                    $0.failed += 1
                }
            case .conflict(let id, let serverItem, let failure):
                guard let index = byID(id) else { continue }
                let item = items[index]
                switch await conflicts.resolve(item, server: serverItem, failure: failure) {
                case .dropped(let resolution):
                    await layers?.rolledBack(id)
                    removals.append(id)
                    update(.conflict(id: id, resolution: resolution)) { $0.pending -= 1 }
                case .resend(let values, let resolution):
                    // Stays at its place: the next claim sends it again, with a new idempotency key.
                    try outbox.replaceValues(id, values)
                    update(.conflict(id: id, resolution: resolution)) { _ in }
                case .failed(let failure):
                    layers?.setAside(id)
                    setAside.append((id, failure))
                    update(.failed(id: id, failure)) {
                        $0.pending -= 1
                        $0.failed += 1
                    }
                case .unresolved:
                    update(.conflict(id: id, resolution: "unresolved")) { _ in }
                }
            case .keep(let id):
                let delay = state.withLock { $0.machine.lastDelay }
                if let delay, let result = results.first(where: { $0.id == id }),
                    case .transient(let transient) = result.outcome
                {
                    publish(.retrying(id: id, attempt: result.attempts, delay: delay, transient.failure))
                }
            }
        }
    }

    /// Sends the items: one mutation, or one batch request.
    private func send(_ items: [OutboxItem]) async -> [DeliveryStateMachine.Sent] {
        if items.contains(where: { $0.damage != nil }) { return await sendOneByOne(items) }
        if items.count == 1, let item = items.first {
            let outcome: DeliveryOutcome
            do {
                var headers: [String: String] = [:]
                if let idempotencyHeader { headers[idempotencyHeader] = item.idempotencyKey }
                // Over HTTP, the body made from the values' stored text: the same bytes at every attempt.
                let result =
                    if server.url != nil {
                        try await server.mutation(jsonBody: bodies.body(of: item), headers: headers)
                    } else {
                        try await server.mutation(item.query, try item.variables().dictionary, headers: headers)
                    }
                outcome = DeliveryOutcome.classify(result)
            } catch {
                outcome = DeliveryOutcome.classify(error, keyed: idempotencyHeader != nil)
            }
            return [DeliveryStateMachine.Sent(id: item.id, attempts: item.attempts, outcome: outcome)]
        }
        // A batch's key names its items (the first's and the last's keys, and how many): a batch sent again holds
        // the same items — after a crash the next run claims the same first items, always the same ones when the
        // batch was full — and so goes with the same key.
        var headers: [String: String] = [:]
        if let idempotencyHeader, let first = items.first, let last = items.last {
            headers[idempotencyHeader] = "\(first.idempotencyKey)..\(last.idempotencyKey)/\(items.count)"
        }
        do {
            let requests = try items.map { item in
                (query: item.query, variables: try item.variables().dictionary as [String: any GQLValueConvertible])
            }
            let results = try await server.batch(requests, headers: headers)
            return zip(items, results).map { item, result in
                DeliveryStateMachine.Sent(id: item.id, attempts: item.attempts, outcome: .classify(result))
            }
        } catch {
            if let error = error as? GQLError, GQLServer.refusesBatches(error) {
                // Nothing of a batch refused as a whole ran: the same items go one by one, now and from now on
                // (Strawberry, by default, answers any JSON array 400 "Batching is not enabled").
                update(nil) { $0.machine.refuseBatches() }
                return await sendOneByOne(items)
            }
            let outcome = DeliveryOutcome.classify(error, keyed: !headers.isEmpty)
            return items.map { DeliveryStateMachine.Sent(id: $0.id, attempts: $0.attempts, outcome: outcome) }
        }
    }

    /// Items sent one by one, in order, none after one that is kept for a retry (it goes first): items of which
    /// some cannot be sent as stored (``OutboxItem/damage``, set aside unsent), or a batch the server refused.
    private func sendOneByOne(_ items: [OutboxItem]) async -> [DeliveryStateMachine.Sent] {
        var results: [DeliveryStateMachine.Sent] = []
        for item in items {
            guard let damage = item.damage else {
                let sent = await send([item])
                results += sent
                if sent.contains(where: { if case .transient = $0.outcome { true } else { false } }) { break }
                continue
            }
            results.append(.init(id: item.id, attempts: item.attempts, outcome: .permanent(damage)))
        }
        return results
    }

    // MARK: Calls from the engine

    /// A call was committed to the outbox.
    func enqueued(_ enqueued: OutboxStore.Enqueued) {
        let woken: Bool
        switch enqueued {
        case .inserted(let id):
            woken = update(.queued(id: id, merged: false)) {
                $0.pending += 1
                return $0.machine.wake()
            }
        case .merged(let id):
            woken = update(.queued(id: id, merged: true)) { $0.machine.wake() }
        }
        // A running or backing-off loop sees the new item by itself; waking it per call cost a thread switch.
        if woken { signal.signal() }
    }

    /// Items were put back or removed by the app; `pending`/`failed` change by these amounts.
    func adjust(pending: Int, failed: Int) {
        update(nil) {
            $0.pending += pending
            $0.failed += failed
            if pending > 0 { $0.machine.wake() }
        }
        signal.signal()
    }

    func resume() {
        update(nil) { $0.machine.resume(now: .now) }
        signal.signal()
    }

    /// Returns once a claim found no pending item.
    func drain() async throws {
        try Task.checkCancellation()
        let ticket = try state.withLock { state in
            if let stopped = state.stopped { throw stopped }
            let ticket = state.drainWaiters.add()
            state.machine.wake()
            return ticket
        }
        signal.signal()
        try await state.wait(for: ticket, in: \.drainWaiters) { _ in .failure(CancellationError()) }
    }

    /// Ends the loop; drains in progress fail with `.closed`.
    func stop(_ error: GQLError = GQLError(.closed, "the sync engine was shut down", operation: "drain")) {
        let resumption = state.withLock { state in
            state.machine.stop()
            if state.stopped == nil { state.stopped = error }
            return state.drainWaiters.resumeAll(with: .failure(error))
        }
        signal.signal()
        resumption.run()
    }

    private func stopAfterFailure(_ error: any Error) {
        let message = "the outbox could not be written: \(error)"
        stop(GQLError(.closed, message, operation: "sync"))
        publish(.stopped(message))
    }

    // MARK: Status

    /// The status now, without an event.
    var current: GQLSync.Status { state.withLock { status($0, event: nil) } }

    /// A sequence of statuses that starts with the current one.
    func subscribe() -> AsyncStream<GQLSync.Status> {
        state.withLock { statuses.subscribe(first: status($0, event: nil)) }
    }

    /// Changes the state and publishes the status it gives, with `event`, under one lock; no status, nor event,
    /// is made while nobody listens (the delivery loop calls this a few times per item).
    @discardableResult
    private func update<T>(_ event: @autoclosure () -> GQLSync.Event?, _ body: (inout State) -> T) -> T {
        state.withLock { state in
            let wasOnline = state.machine.isOnline
            let result = body(&state)
            guard statuses.isListenedTo else { return result }
            if wasOnline != state.machine.isOnline {
                statuses.publish(status(state, event: state.machine.isOnline ? .online : .offline))
            }
            if let event = event() { statuses.publish(status(state, event: event)) }
            return result
        }
    }

    private func publish(_ event: GQLSync.Event) {
        update(event) { _ in }
    }

    private func status(_ state: State, event: GQLSync.Event?) -> GQLSync.Status {
        GQLSync.Status(
            isOnline: state.machine.isOnline, pendingCount: state.pending, failedCount: state.failed,
            inFlight: state.machine.inFlight, sentCount: state.sent, event: event)
    }
}
