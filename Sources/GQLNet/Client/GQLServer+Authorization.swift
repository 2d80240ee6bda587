import GQLCore
import GQLHTTP

extension GQLServer {
    /// Gives the `Authorization` value for a request or a WebSocket connection (`"Bearer eyJ…"`, or the bare token
    /// AppSync's OpenID Connect and Cognito modes take), or `nil` to send none.
    ///
    /// ``GQLServer`` asks it before every HTTP request and before every WebSocket connect and reconnect, so a
    /// provider that caches a token and refreshes it ahead of expiry is asked often and cheaply. When the server
    /// refuses the value (HTTP 401; WebSocket close 4401 or 4403, `connection_error`, or AppSync's
    /// `UnauthorizedException`), it is asked once more with ``AuthorizationRequest/isRetry`` set and the refused
    /// value, and the request or connection is retried once with the new value.
    ///
    /// ```swift
    /// let server = GQLServer(HTTP: "https://example.com/graphql", authorization: { request in
    ///     "Bearer \(try await tokens.current(forceRefresh: request.isRetry))"
    /// })
    /// ```
    /// Errors it throws end the request (HTTP) or the connection attempt (WebSocket) unchanged.
    public typealias AuthorizationProvider = @Sendable (AuthorizationRequest) async throws -> String?

    /// Why ``GQLServer`` asks its ``AuthorizationProvider`` for a value.
    ///
    /// ```swift
    /// let provider: GQLServer.AuthorizationProvider = { request in
    ///     request.isRetry ? try await refreshedToken() : try await cachedToken()
    /// }
    /// ```
    public struct AuthorizationRequest: Sendable, Hashable {
        /// Where the value goes.
        public enum Transport: Sendable, Hashable {
            /// The `Authorization` header of an HTTP request.
            case http
            /// The WebSocket's `connection_init` payload (`Authorization`), or AppSync's `header` and every
            /// `start` (`Authorization`).
            case webSocket
        }

        /// Where the value goes.
        public var transport: Transport
        /// `true` when the server just refused ``rejected``: the provider should return a fresh value (refresh its
        /// token) rather than the one it holds. A provider that cannot may return `nil` or throw; the refusal then
        /// reaches the caller.
        public var isRetry: Bool
        /// The value the server refused, when ``isRetry``; `nil` when none was sent.
        public var rejected: String?

        public init(transport: Transport, isRetry: Bool = false, rejected: String? = nil) {
            self.transport = transport
            self.isRetry = isRetry
            self.rejected = rejected
        }
    }

    /// Asks `provider` for a value and checks it can travel in a header (no control characters, as for every
    /// header; the value is never quoted).
    static func authorizationValue(
        from provider: AuthorizationProvider, _ request: AuthorizationRequest, operation: String
    ) async throws -> String? {
        guard let value = try await provider(request) else { return nil }
        guard !value.isEmpty else {
            throw GQLError(
                .invalidArgument, "the authorization provider returned an empty value; return nil to send none",
                operation: operation)
        }
        try HeaderCheck.validate(["Authorization": value], operation: operation)
        return value
    }
}
