import Foundation
import GQLCore
import GQLHTTP
import Logging

/// The socket and timer side of ``SocketConnection``: what the socket reports goes to the state machine, and the
/// tasks that open sockets and wait for deadlines.
extension SocketConnection {
    // MARK: - Socket events

    /// Socket `generation` is open: it becomes the current socket (reading is paused and resumed on it), unless
    /// the machine moved on meanwhile.
    func opened(_ generation: Int, socket: WebSocketChannel) {
        run(
            shared.withLock { shared in
                if shared.machine.generation == generation { shared.socket = socket }
                return apply(shared.machine.socketOpened(generation, at: .now), to: &shared)
            })
    }

    func received(_ text: String, on generation: Int) {
        let now = ContinuousClock.now
        let effects: [Effect]
        do {
            let message = try endpoint.codec.decode(text)
            effects = shared.withLock { apply($0.machine.received(message, on: generation, at: now), to: &$0) }
        } catch {
            let error = error as? GQLError ?? GQLError(.invalidResponse, "\(error)")
            let (current, actions) = shared.withLock { shared in
                (
                    shared.machine.generation == generation,
                    apply(shared.machine.receivedInvalid(error, on: generation, at: now), to: &shared)
                )
            }
            // The message quotes the frame, which may carry data: log only that it happened.
            if current { logger.warning("GraphQL WebSocket message rejected", metadata: ["code": "\(error.code)"]) }
            effects = actions
        }
        run(effects)
    }

    /// Socket `generation` closed (with the server's close `code` and `reason`, if it sent them), or could not be
    /// opened.
    func closed(_ generation: Int, code: UInt16?, reason: String?, error: (any Error)?) {
        let failure = error.map { error -> GQLError in
            if let error = error as? GQLError { return error }
            return GQLError(
                .connection,
                "the WebSocket to \(GQLServer.loggable(endpoint.url)) failed: \(describeConnectError(error))")
        }
        logger.debug(
            "GraphQL WebSocket closed",
            metadata: ["code": "\(code.map(String.init) ?? "none")", "error": "\(failure?.message ?? "none")"])
        run(
            shared.withLock {
                apply(
                    $0.machine.socketClosed(generation, code: code, reason: reason, error: failure, at: .now), to: &$0)
            })
    }

    /// What socket `generation` reported, on its event loop.
    func handle(_ event: WebSocketEvent, on generation: Int) {
        switch event {
        case .text(let text):
            received(text, on: generation)
        case .tooLarge:
            let error = GQLError(
                .responseTooLarge,
                "a WebSocket message from \(GQLServer.loggable(endpoint.url)) is larger than the "
                    + "\(configuration.maximumResponseSize)-byte maximum")
            run(shared.withLock { apply($0.machine.receivedInvalid(error, on: generation, at: .now), to: &$0) })
        case .invalid(let error):
            run(shared.withLock { apply($0.machine.receivedInvalid(error, on: generation, at: .now), to: &$0) })
        }
    }

    func tick() {
        run(shared.withLock { apply($0.machine.tick(at: .now), to: &$0) })
    }

    // MARK: - Tasks

    /// Sleeps until the machine's next deadline and ticks, for as long as it has one. A deadline that moves
    /// earlier replaces this task (see `.reschedule`); one that moves later is picked up after the wake-up.
    func runTimer(until first: ContinuousClock.Instant) async {
        var deadline = first
        while true {
            try? await Task.sleep(until: deadline, clock: .continuous)
            if Task.isCancelled { return }
            tick()
            let next = shared.withLock { shared -> ContinuousClock.Instant? in
                // Cancelled under this lock when replaced: then the replacement owns the timer fields.
                guard !Task.isCancelled else { return nil }
                let next = shared.machine.nextDeadline
                shared.timerDeadline = next
                if next == nil { shared.timerTask = nil }
                return next
            }
            guard let next else { return }
            deadline = next
        }
    }

    /// A close frame's reason: at most 123 UTF-8 bytes (a control frame carries 125, two of them the code), cut at
    /// a character boundary.
    static func closeReason(_ reason: String) -> String {
        var result = ""
        var bytes = 0
        for character in reason {
            bytes += character.utf8.count
            guard bytes <= 123 else { break }
            result.append(character)
        }
        return result
    }

    /// Opens socket `generation` (``WebSocketChannel``: the handshake carries the endpoint's headers and nothing
    /// else), sends `connection_init`, then writes the queue until the socket closes; messages arrive through
    /// ``handle(_:on:)`` on the socket's event loop.
    func runSocket(_ generation: Int, outgoing: SocketOutbox) async {
        let socket: WebSocketChannel
        let initText: String
        do {
            var extra = GQLValues(try await endpoint.connectionPayload?() ?? [:])
            if let value = try await authorization(for: generation) { extra["Authorization"] = .string(value) }
            let (url, initPayload) = try prepare(extra, for: generation)
            let handshake = try WebSocketHandshake(
                url: url, subprotocol: endpoint.codec.subprotocol, headers: endpoint.handshakeHeaders)
            initText = try endpoint.codec.connectionInit(payload: initPayload).jsonString()
            let settings = WebSocketChannel.Settings(
                maximumMessageSize: configuration.maximumResponseSize, connectTimeout: configuration.connectTimeout)
            socket = try await WebSocketChannel.connect(handshake, settings: settings) { [weak self] event in
                self?.handle(event, on: generation)
            }
        } catch {
            closed(generation, code: nil, reason: nil, error: error)
            return
        }
        logger.debug("GraphQL WebSocket open", metadata: ["url": "\(GQLServer.loggable(endpoint.url))"])
        // Before `connection_init` leaves: the acknowledgement may arrive at once, on another thread.
        opened(generation, socket: socket)
        do {
            try await socket.send(initText)
        } catch {
            socket.abort()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while let item = await outgoing.next() {
                    switch item {
                    case .text(let text):
                        // A failed write means the socket is closing; its closure says why.
                        do { try await socket.send(text) } catch { return }
                    case .close(let code, let reason):
                        socket.close(code: code, reason: reason)
                        return
                    }
                }
                // The machine moved on without a close (a newer socket replaced this one).
                if !Task.isCancelled { socket.close(code: 1000, reason: "") }
            }
            group.addTask { _ = await socket.closure }
            await group.next()
            group.cancelAll()
        }
        let closure = await socket.closure
        closed(generation, code: closure.code, reason: closure.reason, error: closure.error)
    }

    /// The authorization provider's value for socket `generation`: a retry when the machine opened it after a
    /// refusal, with the value refused.
    private func authorization(for generation: Int) async throws -> String? {
        guard let provider = endpoint.authorization else { return nil }
        let (isRetry, rejected) = shared.withLock { shared in
            (shared.machine.authorizationRetryGeneration == generation, shared.sentAuthorization)
        }
        let request = GQLServer.AuthorizationRequest(
            transport: .webSocket, isRetry: isRetry, rejected: isRetry ? rejected : nil)
        let value: String?
        do {
            value = try await GQLServer.authorizationValue(from: provider, request, operation: "connect")
        } catch let error as GQLError {
            throw error
        } catch {
            // Not a transport failure: said as such, and retried like one (a refresh may succeed later).
            throw GQLError(.connection, "the authorization provider failed: \(error)", operation: "connect")
        }
        shared.withLock { shared in
            if shared.machine.generation == generation { shared.sentAuthorization = value }
        }
        return value
    }

    /// The URL to open and the `connection_init` payload, given the provider's part.
    private func prepare(_ extra: GQLValues, for generation: Int) throws -> (url: String, payload: GQLValues?) {
        guard endpoint.codec.kind == .appSync else { return (endpoint.url, extra) }
        var authorization = endpoint.appSyncAuthorization
        authorization.merge(extra) { _, new in new }
        if let host = endpoint.appSyncHost { authorization["host"] = .string(host) }
        let header = try GQLValue.object(authorization).jsonData().base64EncodedString()
        let stored = authorization
        shared.withLock { shared in
            // A late provider of an abandoned socket must not replace the current connection's token.
            if shared.machine.generation == generation { shared.authorization = stored }
        }
        guard var components = URLComponents(string: endpoint.url) else {
            throw GQLError(.invalidArgument, "'\(GQLServer.loggable(endpoint.url))' is not a usable WebSocket URL")
        }
        var items = components.queryItems ?? []
        items.removeAll { $0.name == "header" || $0.name == "payload" }
        items += [URLQueryItem(name: "header", value: header), URLQueryItem(name: "payload", value: "e30=")]
        components.queryItems = items
        // Base64's '+' must not turn into a space on the server.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.string else {
            throw GQLError(.invalidArgument, "'\(GQLServer.loggable(endpoint.url))' is not a usable WebSocket URL")
        }
        return (url, nil)
    }
}
