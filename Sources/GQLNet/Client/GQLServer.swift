import AsyncHTTPClient
import Foundation
import GQLCore
import GQLHTTP

/// A GraphQL server reached over HTTP, WebSocket or both: queries, mutations, subscriptions, typed results and
/// batches.
///
/// Each server owns one AsyncHTTPClient `HTTPClient`, so requests reuse kept-alive connections, and at most one
/// WebSocket, on which every subscription is multiplexed. Call ``shutdown()`` when done with it.
///
/// ```swift
/// let server = GQLServer(HTTP: "https://example.com/graphql", WebSocket: "wss://example.com/graphql")
/// let result = try await server.query("query($id: ID!) { getObjects(objectId: $id) { text } }", ["id": "1"])
/// let text = result.data?["getObjects"]?["text"]?.stringValue
/// for try await event in server.subscription("subscription { onCreateObjects { objectId } }") {
///     print(event.data ?? .null)
/// }
/// try await server.shutdown()
/// ```
///
/// Both `data` and `errors` of a response reach the caller in ``GQLResult``. Transport failures throw
/// ``GQLError``: `.http` (non-2xx status, with ``GQLError/httpStatus`` and an excerpt of the body),
/// `.invalidResponse`, `.responseTooLarge`, `.timeout`, `.cancelled`, `.io`, and for WebSockets `.connection`
/// and `.unauthorized`.
public final class GQLServer: Sendable {
    /// Evaluated before every WebSocket (re)connect: the `connection_init` payload (for AppSync, authorization
    /// fields added to the API key's), so a refreshed token is used on the next connection.
    public typealias ConnectionPayload = @Sendable () async throws -> [String: GQLValue]

    /// The endpoint queries and mutations are posted to; `nil` for a WebSocket-only server, whose operations all
    /// travel over the socket.
    public let url: String?
    /// The WebSocket endpoint subscriptions use; `nil` for an HTTP-only server.
    public var webSocketURL: String? { socket?.endpoint.url }
    /// Headers sent with every request; per-call headers of the same name replace them.
    let headers: [String: String]
    /// Asked for the `Authorization` value of every HTTP request (see ``AuthorizationProvider``).
    let authorization: AuthorizationProvider?
    /// The settings the server was made with.
    public let configuration: Configuration
    let client: OwnedHTTPClient
    let socket: SocketConnection?
    /// The endpoint as messages name it (``GQLServer/loggable(_:)`` of the HTTP URL, or of the WebSocket URL of a
    /// WebSocket-only server), made once rather than parsed again for every request that passes it on.
    let target: String
    /// The caller's logger, or GQLDebug's (see ``Configuration/logger``).
    let log: NetLog
    /// The subscriptions started through the completion-handler form, by id.
    let callbackSubscriptions = GQLLocked<[String: Task<Void, Never>]>([:])
    private let isShutDown = GQLLocked(false)

    /// A server answering GraphQL over HTTP POST at `url`.
    ///
    /// ```swift
    /// let server = GQLServer(HTTP: "https://example.com/graphql", headers: ["authorization": "Basic …"])
    /// let signedIn = GQLServer(HTTP: "https://example.com/graphql", authorization: auth.authorization)
    /// ```
    /// - Parameter authorization: asked for the `Authorization` header of every request; a 401 answer asks it
    ///   again for a fresh value and retries once (see ``AuthorizationProvider``).
    public convenience init(
        HTTP url: String, headers: [String: String] = [:], configuration: Configuration = .init(),
        authorization: AuthorizationProvider? = nil
    ) {
        self.init(url: url, headers: headers, socket: nil, configuration: configuration, authorization: authorization)
    }

    /// A server reached only over a WebSocket: queries, mutations and subscriptions all travel on it.
    ///
    /// ```swift
    /// let server = GQLServer(WebSocket: "wss://example.com/graphql", connectionPayload: {
    ///     ["authorization": .string("Bearer \(try await tokens.current())")]
    /// })
    /// try await server.connect()
    /// ```
    /// - Parameters:
    ///   - protocol: the subprotocol the server speaks; `graphql-transport-ws` by default.
    ///   - headers: sent on the WebSocket handshake.
    ///   - connectionPayload: the `connection_init` payload, evaluated on every (re)connect.
    ///   - authorization: asked on every (re)connect for the payload's `Authorization` member; a refusal
    ///     (4401, 4403, `connection_error`) asks it again for a fresh value and reconnects once.
    public convenience init(
        WebSocket webSocketURL: String, protocol: WebSocketProtocol = .graphqlTransportWS,
        headers: [String: String] = [:], configuration: Configuration = .init(),
        connectionPayload: ConnectionPayload? = nil, authorization: AuthorizationProvider? = nil
    ) {
        self.init(
            HTTP: nil, WebSocket: webSocketURL, protocol: `protocol`, headers: headers,
            configuration: configuration, connectionPayload: connectionPayload, authorization: authorization)
    }

    /// A server answering queries and mutations over HTTP and subscriptions over a WebSocket.
    ///
    /// ```swift
    /// let server = GQLServer(HTTP: "https://example.com/graphql", WebSocket: "wss://example.com/graphql")
    /// ```
    /// - Parameters:
    ///   - headers: sent with every HTTP request and on the WebSocket handshake.
    ///   - connectionPayload: the `connection_init` payload, evaluated on every (re)connect.
    ///   - authorization: asked for the `Authorization` header of every HTTP request and, on every (re)connect,
    ///     for the `connection_init` payload's `Authorization` (AppSync: `Authorization` in its header and every
    ///     `start`); a refusal asks it again for a fresh value and retries once (see ``AuthorizationProvider``).
    public convenience init(
        HTTP url: String?, WebSocket webSocketURL: String, protocol: WebSocketProtocol = .graphqlTransportWS,
        headers: [String: String] = [:], configuration: Configuration = .init(),
        connectionPayload: ConnectionPayload? = nil, authorization: AuthorizationProvider? = nil
    ) {
        // AppSync authorizes in the URL and in every `start`, not with handshake headers.
        let isAppSync = `protocol` == .appSync
        let endpoint = SocketConnection.Endpoint(
            url: webSocketURL, codec: SocketCodec(kind: `protocol`), handshakeHeaders: isAppSync ? [:] : headers,
            connectionPayload: connectionPayload, authorization: authorization,
            appSyncHost: isAppSync ? URLComponents(string: url ?? webSocketURL)?.host : nil,
            appSyncAuthorization: isAppSync ? GQLValues(headers.mapValues { .string($0) }) : [:])
        self.init(
            url: url, headers: headers, socket: endpoint, configuration: configuration, authorization: authorization)
    }

    /// An AWS AppSync API authorized by an API key (sent as `x-api-key`); subscriptions use AppSync's real-time
    /// protocol.
    ///
    /// The real-time URL is derived from the API URL (`appsync-api` becomes `appsync-realtime-api`, `https` becomes
    /// `wss`); pass `realtime` for a custom domain or a local server.
    ///
    /// ```swift
    /// let server = GQLServer(AppSync: "https://x.appsync-api.us-east-2.amazonaws.com/graphql", key: "da2-…")
    /// ```
    /// - Parameters:
    ///   - key: the API key; `nil` for an API authorized by tokens only (OpenID Connect, Cognito user pools).
    ///   - connectionPayload: extra authorization fields, evaluated on every (re)connect.
    ///   - authorization: the token (OpenID Connect, Cognito) for the `Authorization` header of every HTTP request
    ///     and, on every (re)connect, for the real-time `header` and every `start`; a refusal asks it again for a
    ///     fresh value and retries once (see ``AuthorizationProvider``).
    public convenience init(
        AppSync url: String, key: String?, realtime: String? = nil, configuration: Configuration = .init(),
        connectionPayload: ConnectionPayload? = nil, authorization: AuthorizationProvider? = nil
    ) {
        let apiHost = URLComponents(string: url)?.host
        let authorizationProvider = authorization
        var keyFields: GQLValues = [:]
        if let key { keyFields["x-api-key"] = .string(key) }
        let endpoint = SocketConnection.Endpoint(
            url: realtime ?? Self.realtimeURL(forAppSync: url), codec: SocketCodec(kind: .appSync),
            handshakeHeaders: [:], connectionPayload: connectionPayload, authorization: authorizationProvider,
            appSyncHost: apiHost, appSyncAuthorization: keyFields)
        self.init(
            url: url, headers: key.map { ["x-api-key": $0] } ?? [:], socket: endpoint, configuration: configuration,
            authorization: authorizationProvider)
    }

    /// A Hasura endpoint authorized by its admin secret: `x-hasura-admin-secret` on HTTP requests, on the WebSocket
    /// handshake and in `connection_init` (`{"headers": {…}}`); subscriptions use `graphql-transport-ws` at the
    /// same path.
    ///
    /// ```swift
    /// let server = GQLServer(Hasura: "https://x.hasura.app/v1/graphql", secret: "…")
    /// ```
    public convenience init(Hasura url: String, secret: String, configuration: Configuration = .init()) {
        let headers = ["x-hasura-admin-secret": secret]
        let endpoint = SocketConnection.Endpoint(
            url: Self.webSocketURL(forHTTP: url), codec: SocketCodec(kind: .graphqlTransportWS),
            handshakeHeaders: headers,
            connectionPayload: { ["headers": ["x-hasura-admin-secret": .string(secret)]] }, authorization: nil,
            appSyncHost: nil, appSyncAuthorization: [:])
        self.init(url: url, headers: headers, socket: endpoint, configuration: configuration)
    }

    private init(
        url: String?, headers: [String: String], socket: SocketConnection.Endpoint?, configuration: Configuration,
        authorization: AuthorizationProvider? = nil
    ) {
        self.url = url
        self.headers = headers
        self.authorization = authorization
        self.configuration = configuration
        self.log = NetLog(configuration.logger)
        self.client = OwnedHTTPClient(
            HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration.httpClientConfiguration))
        self.socket = socket.map { SocketConnection(endpoint: $0, configuration: configuration) }
        self.target = Self.loggable(url ?? socket?.url ?? "")
    }

    deinit {
        // A server dropped without `shutdown()` still closes its socket; its HTTP client's owner releases the
        // client's connections when the last exchange using it ends.
        if !isShutDown.withLock({ $0 }) { socket?.shutdownNow() }
    }

    /// Closes the server's connections: subscriptions end, the WebSocket closes, requests made afterwards fail;
    /// calling it again does nothing.
    ///
    /// ```swift
    /// try await server.shutdown()
    /// ```
    public func shutdown() async throws {
        let already = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        if !already {
            await socket?.shutdown()
            try await client.shutdown()
        }
    }

    /// Runs a query and returns its data and errors.
    ///
    /// ```swift
    /// let result = try await server.query("query($id: ID!) { getObjects(objectId: $id) { text } }", ["id": "1"])
    /// ```
    /// - Parameters:
    ///   - variables: plain Swift values (`String`, `Int`, `Bool`, arrays, dictionaries, `GQLValue` …).
    ///   - headers: added to this request only (over HTTP; a WebSocket-only server refuses them with
    ///     `.invalidArgument`).
    /// - Throws: ``GQLError`` for transport failures; GraphQL errors are returned in ``GQLResult/errors``.
    public func query(
        _ query: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:]
    ) async throws -> GQLResult {
        try await perform(Self.request(query, variables), headers: headers, operation: "query")
    }

    /// Runs a mutation and returns its data and errors.
    ///
    /// ```swift
    /// let result = try await server.mutation(
    ///     "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
    ///     ["input": ["objectId": "1", "text": "hello"]])
    /// ```
    /// - Throws: ``GQLError`` for transport failures; GraphQL errors are returned in ``GQLResult/errors``.
    public func mutation(
        _ mutation: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:]
    ) async throws -> GQLResult {
        try await perform(Self.request(mutation, variables), headers: headers, operation: "mutation")
    }

    /// Runs a query and decodes the value at a dotted key path of its data.
    ///
    /// ```swift
    /// struct Film: Decodable { var title: String }
    /// let film = try await server.query(Film.self, "query($id: ID!) { film(id: $id) { title } }", ["id": 1], at: "film")
    /// ```
    /// - Throws: ``GQLResult/Failure`` (the GraphQL errors, with the partial data) when the response has errors;
    ///   ``GQLError`` `.notFound` when the path leads nowhere, `.decoding` when the value does not fit `T`.
    public func query<T: Decodable>(
        _ type: T.Type, _ query: String, _ variables: [String: any GQLValueConvertible] = [:], at path: String,
        headers: [String: String] = [:]
    ) async throws -> T {
        try Self.decode(type, at: path, from: await self.query(query, variables, headers: headers))
    }

    /// Runs a mutation and decodes the value at a dotted key path of its data, like
    /// ``query(_:_:_:at:headers:)``.
    ///
    /// ```swift
    /// let created = try await server.mutation(Object.self, create, ["input": input], at: "createObjects")
    /// ```
    public func mutation<T: Decodable>(
        _ type: T.Type, _ mutation: String, _ variables: [String: any GQLValueConvertible] = [:], at path: String,
        headers: [String: String] = [:]
    ) async throws -> T {
        try Self.decode(type, at: path, from: await self.mutation(mutation, variables, headers: headers))
    }

    /// Sends several operations in one HTTP request (a JSON array) and returns their results in order.
    ///
    /// ```swift
    /// let results = try await server.batch([
    ///     (query: "{ listObjects { items { objectId } } }", variables: [:]),
    ///     (query: "query($id: ID!) { getObjects(objectId: $id) { text } }", variables: ["id": "1"]),
    /// ])
    /// ```
    /// - Throws: ``GQLError`` `.invalidResponse` when the server does not answer with an array of as many
    ///   responses (it does not accept batches), and the transport errors of ``query(_:_:headers:)``.
    public func batch(
        _ operations: [(query: String, variables: [String: any GQLValueConvertible])],
        headers: [String: String] = [:]
    ) async throws -> [GQLResult] {
        guard !operations.isEmpty else { return [] }
        if url == nil {
            try Self.refuseSocketHeaders(headers, operation: "batch")
            var results: [GQLResult] = []
            for operation in operations {
                results.append(
                    try await perform(Self.request(operation.query, operation.variables), operation: "batch"))
            }
            return results
        }
        let body = GQLValue.array(operations.map { Self.request($0.query, $0.variables) })
        return try Self.batchResults(await send(body, headers: headers, operation: "batch"), count: operations.count)
    }

    /// Whether `error`, thrown by ``batch(_:headers:)``, says that the server does not take batched requests, so
    /// that nothing of the batch ran and its operations may be sent one by one: an HTTP status that refuses the
    /// request's form (4xx other than 401, 403, 407, 408, 409 and 429, which would refuse or delay each operation
    /// alike; or 501), or a single response instead of an array.
    package static func refusesBatches(_ error: GQLError) -> Bool {
        switch error.code {
        case .http:
            guard let status = error.httpStatus else { return false }
            return status == 501 || ((400..<500).contains(status) && ![401, 403, 407, 408, 409, 429].contains(status))
        case .invalidResponse:
            return error.message.hasSuffix(noBatches)
        default:
            return false
        }
    }

    private static let noBatches = "it does not accept batched requests"

    // MARK: - Helpers

    /// Runs one operation over HTTP, or over the WebSocket when the server has no HTTP endpoint.
    private func perform(_ request: GQLValue, headers: [String: String] = [:], operation: String) async throws
        -> GQLResult
    {
        guard url == nil, socket != nil else {
            return try GQLResult(response: await send(request, headers: headers, operation: operation))
        }
        try Self.refuseSocketHeaders(headers, operation: operation)
        return try await overSocket(request, operation: operation)
    }

    /// Per-call headers have no place on a WebSocket (its messages carry none, and its handshake is shared by
    /// every operation): refused rather than dropped.
    static func refuseSocketHeaders(_ headers: [String: String], operation: String) throws {
        guard !headers.isEmpty else { return }
        throw GQLError(
            .invalidArgument,
            "per-call headers cannot be sent: this server has no HTTP endpoint and the WebSocket carries none per "
                + "operation; give them to the server (headers: or connectionPayload:) instead",
            operation: operation)
    }

    /// The `{"query": …, "variables": …}` object of one operation.
    static func request(_ query: String, _ variables: [String: any GQLValueConvertible]) -> GQLValue {
        var request: GQLValues = ["query": .string(query)]
        if !variables.isEmpty { request["variables"] = .object(variables.mapValues { $0.gqlValue }) }
        return .object(request)
    }

    /// The value at `path` of `result`'s data decoded as `T` (the typed forms' work; GQLCache's typed fetch too).
    package static func decode<T: Decodable>(_ type: T.Type, at path: String, from result: GQLResult) throws -> T {
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        return try result.value(at: path).decode(type)
    }

    /// The results of a batch answer: an array of `count` responses.
    static func batchResults(_ answer: GQLValue, count: Int) throws -> [GQLResult] {
        guard case .array(let responses) = answer else {
            throw GQLError(
                .invalidResponse,
                "the server answered a batch with a single \(answer.kindName) instead of an array: \(Self.noBatches)",
                operation: "batch")
        }
        guard responses.count == count else {
            throw GQLError(
                .invalidResponse, "a batch of \(count) operations got \(responses.count) responses", operation: "batch")
        }
        return try responses.map(GQLResult.init(response:))
    }
}
