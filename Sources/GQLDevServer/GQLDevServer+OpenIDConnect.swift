import Foundation

extension GQLDevServer {
    /// AppSync's `OPENID_CONNECT` authorization: requests carry a JWT (`Authorization: Bearer eyJ…` or the bare
    /// token, as AppSync takes it), checked for its signature, issuer, audience and expiry at the server's clock.
    ///
    /// ```swift
    /// var configuration = GQLDevServer.Configuration()
    /// configuration.openIDConnect = .init(keys: .sharedSecret("dev-secret"), issuer: "https://dev.local/",
    ///                                     audience: "my-client")
    /// ```
    ///
    /// Where the token goes and what a refusal looks like:
    /// - HTTP: the `Authorization` header; a missing, forged, expired or misdirected token gets 401 with a GraphQL
    ///   error body saying why.
    /// - `graphql-transport-ws` and `graphql-ws`: `Authorization` in the `connection_init` payload (or its
    ///   `headers` object, or the upgrade request's headers); a refused token closes the socket with 4401. The
    ///   token's expiry is checked again at every `subscribe` / `start`: once it passed, the socket closes with 4401,
    ///   so a client reconnects with a fresh one.
    /// - AppSync real-time: `Authorization` in the `header` (refused: `connection_error` with
    ///   `UnauthorizedException`) and in every `start`'s `extensions.authorization` (refused: an `error` with
    ///   `UnauthorizedException`).
    ///
    /// With an API key or admin secret configured too, either credential is enough, as with AppSync's additional
    /// authorization modes.
    public struct OpenIDConnect: Sendable {
        /// How signatures are checked.
        public enum Keys: Sendable {
            /// HS256 with this shared secret (its UTF-8 bytes), as `gql-cli serve --jwt-secret` takes it.
            case sharedSecret(String)
            /// RS256 with the keys of this JSON Web Key Set (the JSON text of a `/.well-known/jwks.json`), as
            /// `gql-cli serve --jwks FILE` takes it; a token's `kid` picks the key.
            case jwks(Data)
        }

        /// How signatures are checked.
        public var keys: Keys
        /// The `iss` tokens must carry; `nil` accepts any.
        public var issuer: String?
        /// The client id tokens must be meant for (`aud`, a string or an array); `nil` accepts any.
        public var audience: String?
        /// Clock skew tolerated on `exp`, `nbf` and `iat`. Default none: a token is refused the second it expires.
        public var leeway: Duration = .zero

        public init(keys: Keys, issuer: String? = nil, audience: String? = nil) {
            self.keys = keys
            self.issuer = issuer
            self.audience = audience
        }
    }
}
