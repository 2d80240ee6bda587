import GQLCore

/// How one WebSocket protocol reports an operation's life: its results, its refusal, its end. The three sessions
/// share ``perform(_:id:engine:writer:registered:gate:)``, which runs the operation and sends what this wire says.
struct SessionWire: Sendable {
    /// How the engine shapes responses and errors for this protocol.
    let style: DevEngine.ErrorStyle
    /// The message type carrying one result (`next` or `data`).
    let resultType: String
    /// The `error` payload for a request refused before execution, from the engine's response.
    let refusal: @Sendable (GQLValue) -> GQLValue
    /// The `error` payload for a subscription stream that failed.
    let failure: @Sendable (String) -> GQLValue
    /// Sent once a subscription is running (AppSync's `start_ack`).
    let acknowledgesStart: Bool
    /// What a document that does not parse gets: an `error` (refusal) or, as legacy servers do, a result and
    /// `complete`.
    let refusesUnparsable: Bool

    /// graphql-transport-ws: `next`, errors as an array.
    static let transportWS = SessionWire(
        style: .standard, resultType: "next", refusal: { $0.responseErrors },
        failure: { [["message": .string("Subscription failed: \($0)")]] }, acknowledgesStart: false,
        refusesUnparsable: true)

    /// Legacy graphql-ws: `data`, a single error object.
    static let legacy = SessionWire(
        style: .standard, resultType: "data",
        refusal: { $0.responseErrors[0] ?? ["message": "Subscription failed"] },
        failure: { ["message": .string("Subscription failed: \($0)")] }, acknowledgesStart: false,
        refusesUnparsable: false)

    /// AppSync real-time: `data`, errors under `errors` with an `errorType`, `start_ack`.
    static let appSync = SessionWire(
        style: .appSync, resultType: "data", refusal: { ["errors": $0.responseErrors] },
        failure: { ["errors": [["errorType": "InternalFailure", "message": .string("Subscription failed: \($0)")]]] },
        acknowledgesStart: true, refusesUnparsable: true)

    /// Runs one prepared operation and reports it, or reports why it could not run; sends nothing more once the
    /// client stopped it (task cancelled). `registered` is resumed once a subscription is registered with the
    /// engine (after `gate`, a test's hook), or at once for anything else.
    func perform(
        _ outcome: Result<DevEngine.Prepared, DevEngine.Refusal>, id: String, engine: any DevExecutor,
        writer: SocketWriter, registered: GQLWaiter<Void>? = nil,
        gate: (@Sendable (_ operationName: String?) async -> Void)? = nil
    ) async {
        // Whatever way this ends, the session waiting for the registration goes on.
        defer { registered?.resume(returning: ()) }
        let prepared: DevEngine.Prepared
        switch outcome {
        case .failure(let refusal):
            guard !Task.isCancelled else { return }
            let response = refusal.response(style)
            // Limits and subscriptions are refused with `error` on every protocol; a document that does not parse
            // or validate gets what this protocol's reference server sends.
            let refuses =
                refusal.reason == .limit || refusal.kind == .subscription || style == .appSync
                || (refusal.reason == .unparsable && refusesUnparsable)
            if refuses {
                await writer.send(message("error", id, self.refusal(response)))
            } else {
                await writer.send(message(resultType, id, response))
                await writer.send(Self.complete(id))
            }
            return
        case .success(let value):
            prepared = value
        }
        guard prepared.kind == .subscription else {
            registered?.resume(returning: ())
            let budget = ResponseBudget(limit: engine.limits.maxResponseBytes)
            let response = await engine.execute(prepared, style: style, budget: budget)
            guard !Task.isCancelled else { return }
            await writer.send(json: message(resultType, id, payload: response))
            await writer.send(Self.complete(id))
            return
        }
        await gate?(prepared.operation.name?.value)
        let subscription = await engine.subscribe(prepared, style: style)
        registered?.resume(returning: ())
        switch subscription {
        case .failed(let response):
            guard !Task.isCancelled else { return }
            await writer.send(message("error", id, refusal(response)))
        case .stream(let stream):
            if acknowledgesStart { await writer.send(["type": "start_ack", "id": .string(id)]) }
            do {
                for try await response in stream {
                    guard !Task.isCancelled else { return }
                    await writer.send(json: message(resultType, id, payload: response))
                }
            } catch {
                guard !Task.isCancelled else { return }
                await writer.send(message("error", id, failure("\(error)")))
                return
            }
            guard !Task.isCancelled else { return }
            await writer.send(Self.complete(id))
        }
    }

    /// The `error` message refusing operation `id` because the socket runs as many operations as it may.
    func full(_ id: String, limit: Int) -> GQLValue {
        let exceeded = LimitExceeded(
            .subscriptions, "This socket already runs \(limit) operations, the most it may; stop one first.",
            limit: limit)
        return message(
            "error", id, refusal(ResponseFormatter(style: style).response(errors: [exceeded.graphQLError()])))
    }

    /// `complete` for operation `id`: the same message in all three protocols.
    static func complete(_ id: String) -> GQLValue {
        ["type": "complete", "id": .string(id)]
    }

    private func message(_ type: String, _ id: String, _ payload: GQLValue) -> GQLValue {
        ["type": .string(type), "id": .string(id), "payload": payload]
    }

    /// The message carrying `payload` as JSON text, members in the order ``message(_:_:_:)`` writes them.
    private func message(_ type: String, _ id: String, payload: DevEngine.Response) -> String {
        var out = ResponseJSON(capacity: payload.json.utf8.count + 48)
        out.key("id")
        out.string(id)
        out.raw(",")
        out.key("payload")
        out.raw(payload.json)
        out.raw(",")
        out.key("type")
        out.string(type)
        return "{" + out.text + "}"
    }
}
