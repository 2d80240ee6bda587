import GQLCore

/// How one WebSocket protocol reports an operation's life: its results, its refusal, its end. The three sessions
/// share ``perform(_:id:engine:writer:)``, which runs the operation and sends what this wire says.
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

    /// Runs one operation and reports it; sends nothing more once the client stopped it (task cancelled).
    func perform(_ request: DevEngine.Request, id: String, engine: any DevExecutor, writer: SocketWriter) async {
        switch try? engine.operationKind(request) {
        case .subscription:
            switch await engine.subscribe(request, style: style) {
            case .failed(let response):
                guard !Task.isCancelled else { return }
                await writer.send(message("error", id, refusal(response)))
            case .stream(let stream):
                if acknowledgesStart { await writer.send(["type": "start_ack", "id": .string(id)]) }
                do {
                    for try await response in stream {
                        guard !Task.isCancelled else { return }
                        await writer.send(message(resultType, id, response))
                    }
                } catch {
                    guard !Task.isCancelled else { return }
                    await writer.send(message("error", id, failure("\(error)")))
                    return
                }
                guard !Task.isCancelled else { return }
                await writer.send(["type": "complete", "id": .string(id)])
            }
        case let kind:
            let response = await engine.execute(request, style: style)
            guard !Task.isCancelled else { return }
            if kind == nil, refusesUnparsable {
                // The document does not parse or selects no operation: the engine says why, before execution.
                await writer.send(message("error", id, refusal(response)))
                return
            }
            await writer.send(message(resultType, id, response))
            await writer.send(["type": "complete", "id": .string(id)])
        }
    }

    private func message(_ type: String, _ id: String, _ payload: GQLValue) -> GQLValue {
        ["type": .string(type), "id": .string(id), "payload": payload]
    }
}
