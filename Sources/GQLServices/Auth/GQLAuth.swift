import Foundation
import GQLCore
import GQLCrypto

/// Signs users in with Auth0's database connections and keeps their tokens: stored across launches, refreshed
/// before they expire, and the ID token verified before anything in it is believed.
///
/// ```swift
/// let auth = GQLAuth(domain: "tenant.auth0.com", clientId: "…", tokens: .file(path))
/// try await auth.signUp(email: "ann@example.com", password: "…")     // creates the user, then signs in
/// try await auth.signIn(email: "ann@example.com", password: "…")
/// auth.userId()                                                       // "auth0|65…", the ID token's verified sub
/// let token = try await auth.accessToken()                            // refreshed when it is about to expire
/// let server = GQLServer(HTTP: url, authorization: auth.authorization)   // GQLServer asks before every request
/// await auth.signOut()                                                // revokes the refresh token, clears the store
/// ```
///
/// Tokens are refreshed with the refresh-token grant `refreshMargin` seconds before they expire, and once more
/// when the API refuses one (``authorization`` with a retry); callers that need a token while a refresh is under
/// way wait for that one refresh. An ID token is checked with OpenSSL before it is trusted: RS256 against the
/// tenant's JWKS (`/.well-known/jwks.json`, cached, fetched again for an unknown `kid`) or HS256 with the client
/// secret, with its issuer (`https://<domain>/`), audience (the client id) and times.
///
/// A client secret belongs on a server or in a tool you control, never in a shipped app: anyone can read it
/// out of the binary. Without one, ``updatePassword(password:)`` sends Auth0's reset e-mail instead.
public final class GQLAuth: Sendable {
    /// The Auth0 tenant, such as `tenant.auth0.com`; tokens must be issued by `https://<domain>/`.
    public let domain: String
    /// The application's client id: the audience of its ID tokens.
    public let clientId: String
    /// The database connection users sign up and in with.
    public let connection: String
    let clientSecret: String?
    let configuration: Configuration
    let rest: GQLREST
    let store: any TokenStore
    let verifier: IDTokenVerifier
    let logger = GQLDebug.logger("GQLAuth")
    let state: GQLLocked<State>

    struct State {
        var tokens: Tokens?
        /// The verified claims of `tokens.idToken`.
        var claims: GQLValues?
        /// Why the stored tokens could not be read, until a sign-in replaces them.
        var loadError: GQLError?
        /// The refresh under way, which every caller waits for.
        var refresh: Task<Tokens, any Error>?
        /// Counts sign-ins and sign-outs, so a refresh that finishes after one of them keeps nothing.
        var session = 0
    }

    /// An Auth0 client for the tenant `domain`.
    ///
    /// - Parameters:
    ///   - clientSecret: only where the code runs somewhere you trust (a server, a CLI); it lets ID tokens be
    ///     HS256 and passwords be changed through the Management API.
    ///   - connection: the database connection, Auth0's default `Username-Password-Authentication`.
    ///   - tokens: where tokens are kept; the stored ones are read now.
    ///   - baseURL: where requests go instead of `https://<domain>` (a local server in tests); the issuer stays
    ///     `https://<domain>/`.
    public init(
        domain: String, clientId: String, clientSecret: String? = nil,
        connection: String = "Username-Password-Authentication", tokens: Storage = .memory, baseURL: String? = nil,
        configuration: Configuration = Configuration()
    ) {
        let host = domain.hasPrefix("https://") ? String(domain.dropFirst(8)) : domain
        self.domain = host.hasSuffix("/") ? String(host.dropLast()) : host
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.connection = connection
        self.configuration = configuration
        self.rest = GQLREST(
            baseURL: baseURL ?? "https://\(self.domain)", timeout: configuration.timeout,
            httpClient: configuration.httpClient)
        self.store = tokens.store
        self.verifier = IDTokenVerifier(
            issuer: "https://\(self.domain)/", clientId: clientId, clientSecret: clientSecret,
            leeway: configuration.leeway, rest: rest)
        var initial = State()
        do {
            if let stored = try tokens.store.load() {
                let texts = [stored.accessToken, stored.idToken, stored.refreshToken ?? "", stored.tokenType]
                guard texts.allSatisfy(Self.isHeaderSafe) else {
                    throw GQLError(
                        .invalidToken, "the stored tokens hold a control character (CR, LF …): sign in again")
                }
                initial.tokens = stored
                initial.claims = try JWT(compact: stored.idToken).claims
            }
        } catch let error as GQLError {
            initial = State(loadError: error)
        } catch {
            initial = State(loadError: GQLError(.io, "the stored tokens could not be read: \(error)"))
        }
        self.state = GQLLocked(initial)
    }

    /// Releases the HTTP client (one passed in the configuration is left to its owner).
    public func shutdown() async throws { try await rest.shutdown() }

    /// The signed-in user's id: the `sub` of the ID token, verified when it arrived. Nil when signed out.
    ///
    /// ```swift
    /// if let id = auth.userId() { print("signed in as", id) }
    /// ```
    public func userId() -> String? { state.withLock { $0.claims?["sub"]?.stringValue } }

    /// The signed-in user's e-mail from the ID token (`email` scope), nil when signed out or not given.
    public func email() -> String? { state.withLock { $0.claims?["email"]?.stringValue } }

    /// Whether tokens are stored (they may still need a refresh).
    public var isSignedIn: Bool { state.withLock { $0.tokens != nil } }

    // MARK: - Storing

    /// Keeps `tokens` (already verified, with their ID token's `claims`) in memory and in the store. A new session
    /// (sign-in) replaces whatever was there; a refresh keeps its result only while its `session` is current, and
    /// keeps the old claims when `claims` is nil.
    func keep(_ tokens: Tokens, claims: GQLValues?, newSession: Bool = false, ifSession session: Int? = nil) throws {
        try state.withLock { state in
            if let session, session != state.session {
                guard state.tokens != nil else {
                    throw GQLError(.signedOut, "signed out while the tokens were refreshed")
                }
                return
            }
            try store.save(tokens)
            state.tokens = tokens
            if let claims { state.claims = claims }
            state.loadError = nil
            if newSession { state.session += 1 }
        }
    }

    /// Forgets the tokens, in memory and in the store (only if `session` is still current, when given); returns
    /// the ones forgotten.
    @discardableResult
    func forget(session: Int? = nil) -> Tokens? {
        state.withLock { state in
            if let session, session != state.session { return nil }
            let old = state.tokens
            state.tokens = nil
            state.claims = nil
            state.loadError = nil
            state.session += 1
            do {
                try store.save(nil)
            } catch {
                logger.error("GQLAuth could not delete the stored tokens: \(error)")
            }
            return old
        }
    }
}

/// A ``GQLAuth`` prints and dumps as its tenant and client, never the client secret or a token.
extension GQLAuth: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "GQLAuth(domain: \(domain), clientId: \(clientId), connection: \(connection), clientSecret: "
            + "\(clientSecret == nil ? "none" : "<redacted>"), signedIn: \(isSignedIn))"
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "domain": domain, "clientId": clientId, "connection": connection,
                "hasClientSecret": clientSecret != nil,
                "isSignedIn": isSignedIn,
            ], displayStyle: .class)
    }
}

extension GQLError.Code {
    /// Auth0 refused the e-mail and password (`invalid_grant`: wrong email or password).
    public static let wrongCredentials = GQLError.Code("wrongCredentials")
    /// Sign-up of an e-mail that already has a user.
    public static let userExists = GQLError.Code("userExists")
    /// The password does not meet the connection's password policy.
    public static let passwordTooWeak = GQLError.Code("passwordTooWeak")
    /// Too many attempts: Auth0 blocks the account or the IP address for a while (`too_many_attempts`, HTTP 429).
    public static let tooManyAttempts = GQLError.Code("tooManyAttempts")
    /// The user is blocked.
    public static let blocked = GQLError.Code("blocked")
    /// No user is signed in, or the session ended (refresh token expired or revoked): sign in again.
    public static let signedOut = GQLError.Code("signedOut")
}
