import AsyncHTTPClient
import GQLCore

/// A GraphQL server reached over HTTP: queries, mutations, typed results and batches.
///
/// Each server owns one AsyncHTTPClient `HTTPClient`, so requests reuse kept-alive connections. Call
/// ``shutdown()`` when done with it.
///
/// ```swift
/// let server = GQLServer(HTTP: "https://example.com/graphql", headers: ["authorization": "Bearer …"])
/// let result = try await server.query("query($id: ID!) { getObjects(objectId: $id) { text } }", ["id": "1"])
/// let text = result.data?["getObjects"]?["text"]?.stringValue
/// try await server.shutdown()
/// ```
///
/// Both `data` and `errors` of a response reach the caller in ``GQLResult``. Transport failures throw
/// ``GQLError``: `.http` (non-2xx status, with ``GQLError/httpStatus`` and an excerpt of the body),
/// `.invalidResponse`, `.responseTooLarge`, `.timeout`, `.cancelled`, `.io`.
public final class GQLServer: Sendable {
    /// The GraphQL endpoint requests are posted to.
    public let url: String
    /// Headers sent with every request; per-call headers of the same name replace them.
    let headers: [String: String]
    /// The settings the server was made with.
    public let configuration: Configuration
    let client: HTTPClient
    private let isShutDown = GQLLocked(false)

    /// A server answering GraphQL over HTTP POST at `url`.
    ///
    /// ```swift
    /// let server = GQLServer(HTTP: "https://example.com/graphql", headers: ["authorization": "Basic …"])
    /// ```
    public init(HTTP url: String, headers: [String: String] = [:], configuration: Configuration = .init()) {
        self.url = url
        self.headers = headers
        self.configuration = configuration
        self.client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: configuration.httpClientConfiguration)
    }

    /// An AWS AppSync API authorized by an API key (sent as `x-api-key`).
    ///
    /// ```swift
    /// let server = GQLServer(AppSync: "https://x.appsync-api.us-east-2.amazonaws.com/graphql", key: "da2-…")
    /// ```
    public convenience init(AppSync url: String, key: String, configuration: Configuration = .init()) {
        self.init(HTTP: url, headers: ["x-api-key": key], configuration: configuration)
    }

    /// A Hasura endpoint authorized by its admin secret (sent as `x-hasura-admin-secret`).
    ///
    /// ```swift
    /// let server = GQLServer(Hasura: "https://x.hasura.app/v1/graphql", secret: "…")
    /// ```
    public convenience init(Hasura url: String, secret: String, configuration: Configuration = .init()) {
        self.init(HTTP: url, headers: ["x-hasura-admin-secret": secret], configuration: configuration)
    }

    deinit {
        // A server dropped without `shutdown()` still releases its connections (AsyncHTTPClient requires it).
        if !isShutDown.withLock({ $0 }) { client.shutdown { _ in } }
    }

    /// Closes the server's connections. Requests made afterwards fail; calling it again does nothing.
    ///
    /// ```swift
    /// try await server.shutdown()
    /// ```
    public func shutdown() async throws {
        let already = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        if !already { try await client.shutdown() }
    }

    /// Runs a query and returns its data and errors.
    ///
    /// ```swift
    /// let result = try await server.query("query($id: ID!) { getObjects(objectId: $id) { text } }", ["id": "1"])
    /// ```
    /// - Parameters:
    ///   - variables: plain Swift values (`String`, `Int`, `Bool`, arrays, dictionaries, `GQLValue` …).
    ///   - headers: added to this request only.
    /// - Throws: ``GQLError`` for transport failures; GraphQL errors are returned in ``GQLResult/errors``.
    public func query(
        _ query: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:]
    ) async throws -> GQLResult {
        try await GQLResult(response: send(Self.request(query, variables), headers: headers, operation: "query"))
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
        try await GQLResult(response: send(Self.request(mutation, variables), headers: headers, operation: "mutation"))
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
        let body = GQLValue.array(operations.map { Self.request($0.query, $0.variables) })
        return try Self.batchResults(await send(body, headers: headers, operation: "batch"), count: operations.count)
    }

    // MARK: - Helpers

    /// The `{"query": …, "variables": …}` object of one operation.
    static func request(_ query: String, _ variables: [String: any GQLValueConvertible]) -> GQLValue {
        var request: GQLValues = ["query": .string(query)]
        if !variables.isEmpty { request["variables"] = .object(variables.mapValues { $0.gqlValue }) }
        return .object(request)
    }

    static func decode<T: Decodable>(_ type: T.Type, at path: String, from result: GQLResult) throws -> T {
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        return try result.value(at: path).decode(type)
    }

    /// The results of a batch answer: an array of `count` responses.
    static func batchResults(_ answer: GQLValue, count: Int) throws -> [GQLResult] {
        guard case .array(let responses) = answer else {
            throw GQLError(
                .invalidResponse,
                "the server answered a batch with a single \(answer.kindName) instead of an array: it does not accept batched requests",
                operation: "batch")
        }
        guard responses.count == count else {
            throw GQLError(
                .invalidResponse, "a batch of \(count) operations got \(responses.count) responses", operation: "batch")
        }
        return try responses.map(GQLResult.init(response:))
    }
}
