import Foundation
import GQLCore

extension GQLServer {
    /// Opens the WebSocket and returns once the server acknowledged it (`connection_ack`).
    ///
    /// Subscriptions connect on their own; call this to learn early that the server is unreachable or refuses the
    /// credentials, or to keep the connection up between subscriptions. After a successful `connect()` a lost
    /// connection is reopened (see ``Configuration/reconnect``) until ``disconnect()``.
    ///
    /// ```swift
    /// try await server.connect()
    /// ```
    /// - Throws: ``GQLError`` `.connection` (unreachable, closed), `.timeout` (no acknowledgement within
    ///   ``Configuration/connectTimeout``), `.unauthorized` (4401/4403, `connection_error`), `.invalidArgument`
    ///   when the server has no WebSocket endpoint.
    public func connect() async throws {
        try await requireSocket("connect").connect()
    }

    /// Closes the WebSocket: live subscriptions finish, reconnecting stops. A later subscription or ``connect()``
    /// opens a new one.
    ///
    /// ```swift
    /// await server.disconnect()
    /// ```
    public func disconnect() async {
        socket?.disconnect()
    }

    /// The WebSocket connection's state now; `.disconnected` for an HTTP-only server.
    ///
    /// ```swift
    /// if server.connectionState == .connected { … }
    /// ```
    public var connectionState: ConnectionState { socket?.state ?? .disconnected }

    /// The WebSocket connection's states: the current one, then every change until ``shutdown()``.
    ///
    /// ```swift
    /// for await state in server.connectionStates {
    ///     print(state)   // connecting, connected, reconnecting (attempt 1 in 0.31 seconds), …
    /// }
    /// ```
    public var connectionStates: ConnectionStates { ConnectionStates(connection: socket) }

    /// A subscription's results as they arrive, over the server's WebSocket.
    ///
    /// Iterating starts the subscription (connecting first when needed); leaving the loop or cancelling its task
    /// stops it. Every result keeps both `data` and `errors`. Lost connections are reopened and the subscription
    /// resent, so iteration continues across them; it ends when the server completes the subscription.
    ///
    /// ```swift
    /// for try await event in server.subscription("subscription { onCreateObjects { objectId text } }") {
    ///     print(event.data?["onCreateObjects"]?["text"] ?? .null)
    /// }
    /// ```
    /// - Throws (from iteration): ``GQLResult/Failure`` when the server refuses the subscription with GraphQL
    ///   errors; ``GQLError`` `.unauthorized` or `.connection` when the connection ends for good.
    public func subscription(
        _ subscription: String, _ variables: [String: any GQLValueConvertible] = [:]
    ) -> Subscription {
        Subscription(server: self, request: Self.request(subscription, variables))
    }

    // MARK: - Types

    /// The results of one subscription, as an `AsyncSequence` of ``GQLResult``. See
    /// ``GQLServer/subscription(_:_:)``.
    public struct Subscription: AsyncSequence, Sendable {
        public typealias Element = GQLResult
        public typealias Failure = any Error
        /// Kept so that a subscription outlives the variable its server was held in.
        let server: GQLServer
        let request: GQLValue

        public func makeAsyncIterator() -> Iterator {
            guard let connection = server.socket else {
                let results = SocketResults(onLagChange: { _ in }, onTermination: {})
                results.finish(
                    throwing: GQLError(
                        .invalidArgument, "this server has no WebSocket endpoint for subscriptions",
                        operation: "subscription"))
                return Iterator(server: server, listener: .init(results))
            }
            return Iterator(
                server: server, listener: .init(connection.results(of: request, isSubscription: true)))
        }

        /// Produces a subscription's results. At most a few dozen wait for `next()`: while they do, the socket is
        /// not read (see <doc:Subscriptions>).
        public struct Iterator: AsyncIteratorProtocol {
            let server: GQLServer
            let listener: SocketResults.Listener

            public mutating func next() async throws -> GQLResult? {
                try await listener.results.next()
            }
        }
    }

    /// A WebSocket connection's states, as an `AsyncSequence`. See ``GQLServer/connectionStates``.
    public struct ConnectionStates: AsyncSequence, Sendable {
        public typealias Element = ConnectionState
        public typealias Failure = Never
        let connection: SocketConnection?

        public func makeAsyncIterator() -> Iterator {
            guard let connection else {
                let (stream, continuation) = AsyncStream<ConnectionState>.makeStream()
                continuation.yield(.disconnected)
                continuation.finish()
                return Iterator(base: stream.makeAsyncIterator())
            }
            return Iterator(base: connection.states().makeAsyncIterator())
        }

        /// Produces the states.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<ConnectionState>.AsyncIterator

            public mutating func next() async -> ConnectionState? {
                await base.next()
            }
        }
    }

    /// Returns once the server has started every subscription this client runs on its WebSocket, as far as its
    /// protocol can tell, within ``Configuration/timeout``.
    ///
    /// AppSync acknowledges each subscription (`start_ack`): this waits for all of them on the current socket.
    /// graphql-transport-ws and graphql-ws acknowledge none: this runs a `{ __typename }` query over the same socket
    /// after them and waits for its answer; a server that starts a socket's subscriptions before it reads that
    /// socket's next message (the dev server does) has then started them all. GQLSync's live sync pulls only after
    /// this, so an update the server makes after the pull read cannot fall before its subscription.
    ///
    /// ```swift
    /// try await server.subscriptionsStarted()
    /// ```
    /// - Throws: ``GQLError`` `.timeout`, `.connection` when the socket is lost meanwhile, `.invalidArgument` without
    ///   a WebSocket endpoint.
    package func subscriptionsStarted() async throws {
        let socket = try requireSocket("subscriptionsStarted")
        if socket.endpoint.codec.kind == .appSync {
            try await socket.startsAcknowledged(within: configuration.timeout)
        } else {
            _ = try await overSocket(
                Self.request("query SubscriptionsStarted { __typename }", [:]),
                operation: "subscriptionsStarted")
        }
    }

    // MARK: - Helpers

    /// Runs a query or mutation over the WebSocket and returns its single result, within
    /// ``Configuration/timeout`` (connecting included).
    func overSocket(_ request: GQLValue, operation: String) async throws -> GQLResult {
        let socket = try requireSocket(operation)
        let timeout = configuration.timeout
        let target = self.target
        return try await withThrowingTaskGroup(of: GQLResult.self) { group in
            group.addTask {
                let listener = SocketResults.Listener(socket.results(of: request, isSubscription: false))
                do {
                    if let result = try await listener.results.next() { return result }
                } catch var error as GQLError {
                    // The context stays (HTTP status of a refused upgrade …); only the operation is named.
                    error.operation = operation
                    throw error
                } catch let failure as GQLResult.Failure {
                    // A refusal before execution (validation errors) is still an answer, as it is over HTTP.
                    return GQLResult(data: failure.data, errors: failure.errors)
                }
                if Task.isCancelled {
                    throw GQLError(.cancelled, "the \(operation) to \(target) was cancelled", operation: operation)
                }
                throw GQLError(
                    .invalidResponse, "the server completed the \(operation) without sending a result",
                    operation: operation)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw GQLError(
                    .timeout, "the \(operation) to \(target) took longer than \(timeout)", operation: operation)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else {
                throw GQLError(.cancelled, "the \(operation) to \(target) was cancelled", operation: operation)
            }
            return first
        }
    }

    private func requireSocket(_ operation: String) throws -> SocketConnection {
        guard let socket else {
            throw GQLError(.invalidArgument, "this server has no WebSocket endpoint", operation: operation)
        }
        return socket
    }

    /// AppSync's real-time endpoint for an API URL: `https://x.appsync-api.…/graphql` becomes
    /// `wss://x.appsync-realtime-api.…/graphql`; other hosts keep theirs, with a WebSocket scheme.
    package static func realtimeURL(forAppSync url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        if let host = components.host, host.contains(".appsync-api.") {
            components.host = host.replacingOccurrences(of: ".appsync-api.", with: ".appsync-realtime-api.")
        }
        return webSocketURL(forHTTP: components.string ?? url)
    }

    /// The same URL with a WebSocket scheme (`http` → `ws`, `https` → `wss`).
    package static func webSocketURL(forHTTP url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        switch components.scheme?.lowercased() {
        case "https": components.scheme = "wss"
        case "http": components.scheme = "ws"
        default: break
        }
        return components.string ?? url
    }
}
