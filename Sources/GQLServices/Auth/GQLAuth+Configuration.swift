import AsyncHTTPClient
import Foundation

extension GQLAuth {
    /// How a ``GQLAuth`` talks to Auth0 and when it refreshes.
    ///
    /// ```swift
    /// var configuration = GQLAuth.Configuration()
    /// configuration.audience = "https://api.example.com"     // access tokens for your API
    /// configuration.refreshMargin = 120
    /// let auth = GQLAuth(domain: "tenant.auth0.com", clientId: id, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The API the access tokens are for (Auth0's `audience`), nil for Auth0's default.
        public var audience: String?
        /// The scopes asked for at sign-in; `offline_access` brings the refresh token.
        public var scope = "openid profile email offline_access"
        /// How long before its expiry an access token is refreshed, in seconds.
        public var refreshMargin: TimeInterval = 60
        /// Clock skew tolerated when checking an ID token's `exp`, `nbf` and `iat`, in seconds.
        public var leeway: TimeInterval = 60
        /// The longest a call to Auth0 may wait.
        public var timeout: Duration = .seconds(30)
        /// The time: tests move it forward to expire tokens without waiting.
        public var clock: @Sendable () -> Date = { Date() }
        /// An AsyncHTTPClient to share; nil makes one owned by the ``GQLAuth``.
        public var httpClient: HTTPClient?

        public init() {}
    }
}
