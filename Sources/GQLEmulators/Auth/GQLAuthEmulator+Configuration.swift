import Foundation
import GQLCrypto

extension GQLAuthEmulator {
    /// Where the Auth0 emulator listens, the application it knows, its tenant's name and how it treats passwords
    /// and tokens.
    ///
    /// ```swift
    /// var configuration = GQLAuthEmulator.Configuration()
    /// configuration.port = 0                                   // any free port
    /// configuration.passwordPolicy = .good                     // as a tenant's database connection
    /// configuration.rotateRefreshTokens = true                 // Auth0's refresh-token rotation
    /// ```
    public struct Configuration: Sendable {
        /// The address to bind; meant for loopback. Default `127.0.0.1`.
        public var host = "127.0.0.1"
        /// The port; 0 picks a free one. Default 4002.
        public var port = 4002
        /// The application's client id, the `aud` of ID tokens. Default ``GQLEmulatorCredentials/authClientId``.
        public var clientId = GQLEmulatorCredentials().authClientId
        /// The application's client secret: optional on sign-in and refresh (a native app sends none), checked
        /// when sent, required for `client_credentials`. Default ``GQLEmulatorCredentials/authClientSecret``.
        public var clientSecret = GQLEmulatorCredentials().authClientSecret
        /// The tenant's domain; tokens are issued by `https://<domain>/`, as Auth0's are (and as ``GQLAuth``
        /// checks). `nil`: `HOST:PORT` of the running emulator, so `GQLAuth(domain: "127.0.0.1:4002", …,
        /// baseURL: "http://127.0.0.1:4002")` works as it is.
        public var domain: String?
        /// The database connection users sign up to. Default Auth0's `Username-Password-Authentication`.
        public var connection = "Username-Password-Authentication"
        /// The API access tokens are for when a sign-in names no `audience` (Auth0's tenant "Default Audience");
        /// `nil`: such access tokens are for `/userinfo` only (still RS256 JWTs, where Auth0 would give an opaque
        /// token).
        public var defaultAudience: String?
        /// The scopes (permissions) of the APIs users sign in for: a sign-in's `scope` keeps these and OpenID
        /// Connect's (`openid profile email offline_access`) and drops the others, as Auth0 drops scopes an API
        /// does not define. The Management API's scopes are never given to a user. Default none.
        public var apiScopes: [String] = []
        /// The connection's password policy. Default ``PasswordPolicy/low`` (6 characters), lenient for local
        /// work; a tenant's new connections use ``PasswordPolicy/good``.
        public var passwordPolicy = PasswordPolicy.low
        /// Whether a refresh gives a new refresh token and retires the old one (Auth0's rotation; reusing a
        /// retired token revokes every token of its sign-in). Default false, as Auth0's.
        public var rotateRefreshTokens = false
        /// How long access tokens last. Default 86,400 s, as Auth0's.
        public var accessTokenLifetime: Duration = .seconds(86_400)
        /// How long ID tokens last. Default 36,000 s, as Auth0's.
        public var idTokenLifetime: Duration = .seconds(36_000)
        /// Consecutive wrong passwords after which a user is blocked (Auth0's brute-force protection answers
        /// `too_many_attempts`) until the password is changed. Default 10, as Auth0's.
        public var maxFailedAttempts = 10
        /// scrypt's cost for new password hashes. Default RFC 7914's interactive cost (n 2¹⁴, r 8, p 1).
        package var passwordHashCost = Scrypt.Cost.interactive
        /// Where users, refresh tokens and the signing key are kept; `nil`: a fresh temporary folder.
        public var dataFolder: GQLDataFolder?
        /// The timeouts and header limits of every connection.
        public var limits = GQLEmulatorLimits()
        /// The time tokens are stamped with and checked at. Default: the system clock.
        public var clock: @Sendable () -> Date = Date.init

        public init() {}
    }

    /// A database connection's password policy, as Auth0 defines its levels.
    public enum PasswordPolicy: String, Sendable, CaseIterable {
        /// At least 1 character.
        case none
        /// At least 6 characters.
        case low
        /// At least 8 characters, with lower-case letters, upper-case letters and numbers.
        case fair
        /// At least 8 characters, with 3 of: lower-case letters, upper-case letters, numbers, special characters.
        case good
        /// At least 10 characters, 3 of the 4 kinds, and no character more than twice in a row.
        case excellent
    }
}
