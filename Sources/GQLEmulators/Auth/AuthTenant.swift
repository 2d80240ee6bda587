import Foundation
import GQLCore
import GQLCrypto

/// The Auth0 emulator's tenant: one application, one database connection, its users and refresh tokens, and the
/// key it signs with. Every operation answers what Auth0's Authentication API answers, or throws the
/// ``Auth0Error`` Auth0 would send. Transport-free: ``AuthRoutes`` maps HTTP onto it.
final class AuthTenant: Sendable {
    let configuration: GQLAuthEmulator.Configuration
    let folder: GQLDataFolder
    let key: AuthSigningKey
    private let directory: GQLLocked<AuthDirectory>
    /// The domain once known (the configured one, or `HOST:PORT` when the emulator listens).
    private let domainName: GQLLocked<String?>
    /// A hash made once to compare a password with when the user does not exist, so a wrong e-mail takes as long
    /// as a wrong password.
    private let decoy: AuthDirectory.PasswordHash

    /// The scopes of Auth0's Management API token the emulator gives `client_credentials`.
    static let managementScope = "read:users update:users"

    init(configuration: GQLAuthEmulator.Configuration, folder: GQLDataFolder) throws {
        self.configuration = configuration
        self.folder = folder
        key = try AuthSigningKey.loadOrCreate(in: folder)
        directory = GQLLocked(try AuthDirectory.load(from: folder))
        domainName = GQLLocked(configuration.domain)
        decoy = try AuthDirectory.PasswordHash("decoy", cost: configuration.passwordHashCost)
    }

    /// Where the emulator listens, `http://HOST:PORT`, once it does.
    private let listenURL = GQLLocked<String?>(nil)

    /// Records where the emulator listens; the domain becomes `host:port` unless one was configured.
    func listening(host: String, port: Int) {
        let host = host.contains(":") ? "[\(host)]" : host
        domainName.withLock { domain in
            if domain == nil { domain = "\(host):\(port)" }
        }
        listenURL.withLock { $0 = "http://\(host):\(port)" }
    }

    /// `http://HOST:PORT` of the running emulator (the configured port before it listens).
    var baseURL: String { listenURL.withLock { $0 } ?? "http://\(configuration.host):\(configuration.port)" }

    /// The tenant's domain (`HOST:PORT` of the emulator unless configured).
    var domain: String { domainName.withLock { $0 } ?? "\(configuration.host):\(configuration.port)" }

    /// `https://<domain>/`, every token's `iss`.
    var issuer: String { "https://\(domain)/" }

    /// The audience of the Management API's tokens.
    var managementAudience: String { "https://\(domain)/api/v2/" }

    private var now: Date { configuration.clock() }

    // MARK: - Clients

    /// Checks the application's credentials: the client id always, the secret when given (`client_secret` in the
    /// body or HTTP Basic) or `secretRequired`.
    func authenticateClient(id: String?, secret: String?, secretRequired: Bool = false) throws {
        guard let id, GQLEmulatorCredentials.same(id, configuration.clientId) else { throw Auth0Error.unauthorizedClient }
        if secret != nil || secretRequired {
            guard let secret, GQLEmulatorCredentials.same(secret, configuration.clientSecret) else {
                throw Auth0Error.unauthorizedClient
            }
        }
    }

    // MARK: - Sign-up

    /// `POST /dbconnections/signup`: a new user of the connection; Auth0's answer `{_id, email, email_verified}`.
    func signUp(email rawEmail: String?, password: String?, connection: String?) throws -> GQLValues {
        guard connection == configuration.connection else {
            throw Auth0Error.database("invalid_connection", "Invalid connection")
        }
        guard let rawEmail, let email = Self.normalizedEmail(rawEmail) else {
            throw Auth0Error.database("invalid_parameter", "Invalid email address.", name: "BadRequestError")
        }
        guard let password, !password.isEmpty else {
            throw Auth0Error.database("invalid_parameter", "Missing required parameter: password")
        }
        if let weak = PasswordPolicyCheck(policy: configuration.passwordPolicy).refusal(password) {
            throw Auth0Error(status: .badRequest, body: weak)
        }
        guard directory.withLock({ $0.user(email: email) }) == nil else { throw Self.invalidSignUp }
        let hash: AuthDirectory.PasswordHash
        do {
            hash = try AuthDirectory.PasswordHash(password, cost: configuration.passwordHashCost)
        } catch {
            throw Self.serverError
        }
        let hex = Bytes.hex(Scrypt.salt(12))
        let stamp = GQLDate.string(from: now)
        let user = AuthDirectory.User(
            id: "auth0|" + hex, email: email, connection: configuration.connection, password: hash, createdAt: stamp,
            updatedAt: stamp)
        try change { directory throws in
            // Checked again: another sign-up of the same e-mail may have finished while this one hashed.
            guard directory.user(email: email) == nil else { throw Self.invalidSignUp }
            directory.users[user.id] = user
        }
        return ["_id": .string(hex), "email": .string(email), "email_verified": false]
    }

    /// Auth0 answers the same for an existing e-mail as for other refused sign-ups (no user enumeration).
    static let invalidSignUp = Auth0Error.database("invalid_signup", "Invalid sign up")
    static let serverError = Auth0Error.oauth(.internalServerError, "server_error", "The emulator could not do that.")

    // MARK: - Token grants

    /// The password grants (`password-realm` with `realm`, or `password` on the default connection).
    func passwordGrant(
        username: String?, password: String?, realm: String?, scope: String?, audience: String?
    ) throws -> GQLValues {
        guard let username, !username.isEmpty else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: username")
        }
        guard let password else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: password")
        }
        guard realm == nil || realm == configuration.connection else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "The connection (realm) does not exist")
        }
        let found = directory.withLock { $0.user(email: username) }
        guard let user = found else {
            _ = decoy.matches(password)
            throw Auth0Error.wrongCredentials
        }
        if user.blocked { throw Self.tooManyAttempts }
        guard user.password.matches(password) else {
            // This attempt is only wrong; once the user is blocked, the next ones are refused, the right one too.
            try change { directory throws in
                guard var current = directory.users[user.id] else { return }
                current.failedAttempts += 1
                if current.failedAttempts >= configuration.maxFailedAttempts { current.blocked = true }
                directory.users[user.id] = current
            }
            throw Auth0Error.wrongCredentials
        }
        // Checked again now that the hash is done: wrong attempts that ran alongside may have blocked the user.
        guard let current = directory.withLock({ $0.users[user.id] }) else { throw Auth0Error.wrongCredentials }
        if current.blocked { throw Self.tooManyAttempts }
        if current.failedAttempts > 0 {
            try change { directory throws in
                guard directory.users[user.id]?.blocked == false else { throw Self.tooManyAttempts }
                directory.users[user.id]?.failedAttempts = 0
            }
        }
        let audience = audience ?? configuration.defaultAudience
        try refuseManagement(audience)
        let granted = Self.scopes(scope ?? "openid").filter { allowedUserScopes.contains($0) }
        return try issue(
            user, scope: granted, audience: audience, grant: "password",
            refresh: granted.contains("offline_access") ? .new : .none)
    }

    /// The scopes a user's sign-in can be given: OpenID Connect's and the configured API's
    /// (``GQLAuthEmulator/Configuration/apiScopes``); others are dropped, as Auth0 drops scopes an API does not
    /// define. The Management API's never, whatever is configured.
    private var allowedUserScopes: Set<String> {
        Set(["openid", "profile", "email", "offline_access"] + configuration.apiScopes)
            .subtracting(Self.scopes(Self.managementScope))
    }

    /// A user's grant for the Management API is refused: only `client_credentials` of the application reaches it.
    private func refuseManagement(_ audience: String?) throws {
        guard let audience, audience == managementAudience else { return }
        throw Auth0Error.oauth(
            .forbidden, "access_denied",
            "Client is not authorized to access \"\(audience)\". You need to create a \"client-grant\" associated "
                + "to this API.")
    }

    static let tooManyAttempts = Auth0Error.oauth(
        .tooManyRequests, "too_many_attempts",
        "Your account has been blocked after multiple consecutive login attempts. Change the password to unblock it.")

    /// The `refresh_token` grant; `scope`, when given, must be within the sign-in's.
    func refreshGrant(token: String?, scope: String?) throws -> GQLValues {
        guard let token, !token.isEmpty else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: refresh_token")
        }
        let tokenKey = AuthDirectory.tokenKey(token)
        let (grant, user) = try change { directory throws -> (AuthDirectory.RefreshGrant, AuthDirectory.User) in
            guard let grant = directory.refreshTokens[tokenKey] else { throw Auth0Error.badRefreshToken }
            if grant.retired {
                // A rotated token presented again: whoever holds it may have stolen it; the sign-in ends.
                directory.revokeFamily(grant.family)
                throw Auth0Error.badRefreshToken
            }
            guard let user = directory.users[grant.userId], !user.blocked else { throw Auth0Error.badRefreshToken }
            return (grant, user)
        }
        try refuseManagement(grant.audience)
        let granted = Self.scopes(grant.scope).filter { allowedUserScopes.contains($0) }
        var asked = granted
        if let scope, !scope.isEmpty {
            asked = Self.scopes(scope)
            guard Set(asked).isSubset(of: Set(granted)) else {
                throw Auth0Error.oauth(.forbidden, "access_denied", "The refresh token does not grant the scope asked for.")
            }
        }
        return try issue(
            user, scope: asked, audience: grant.audience, grant: "password",
            refresh: configuration.rotateRefreshTokens ? .rotate(tokenKey, grant) : .none)
    }

    /// `client_credentials` for the Management API (the only API the emulator's application may call so).
    func clientCredentials(audience: String?) throws -> GQLValues {
        guard audience == managementAudience else {
            throw Auth0Error.oauth(.forbidden, "access_denied", "Service not enabled within domain: \(audience ?? "")")
        }
        let issuedAt = Int64(now.timeIntervalSince1970)
        let claims: GQLValues = [
            "iss": .string(issuer), "sub": .string(configuration.clientId + "@clients"),
            "aud": .string(managementAudience), "iat": .int(issuedAt),
            "exp": .int(issuedAt + configuration.accessTokenLifetime.components.seconds),
            "scope": .string(Self.managementScope), "gty": "client-credentials", "azp": .string(configuration.clientId),
        ]
        return [
            "access_token": .string(try signed(claims)), "token_type": "Bearer",
            "expires_in": .int(configuration.accessTokenLifetime.components.seconds),
            "scope": .string(Self.managementScope),
        ]
    }

    /// What happens to refresh tokens when tokens are issued.
    private enum RefreshPlan {
        /// None is given.
        case none
        /// A new one, the first of its sign-in.
        case new
        /// The presented one (by its key) is retired and a new one of its family given.
        case rotate(String, AuthDirectory.RefreshGrant)
    }

    /// The token answer for `user`: an access token, an ID token with `openid`, a refresh token as `refresh` says.
    private func issue(
        _ user: AuthDirectory.User, scope: [String], audience: String?, grant: String, refresh: RefreshPlan
    ) throws -> GQLValues {
        let issuedAt = Int64(now.timeIntervalSince1970)
        let scopeText = scope.joined(separator: " ")
        let userinfo = issuer + "userinfo"
        let accessAudience: GQLValue =
            if let audience {
                scope.contains("openid") ? .array([.string(audience), .string(userinfo)]) : .string(audience)
            } else {
                .string(userinfo)
            }
        let access: GQLValues = [
            "iss": .string(issuer), "sub": .string(user.id), "aud": accessAudience, "iat": .int(issuedAt),
            "exp": .int(issuedAt + configuration.accessTokenLifetime.components.seconds), "scope": .string(scopeText),
            "azp": .string(configuration.clientId), "gty": .string(grant),
        ]
        var answer: GQLValues = [
            "access_token": .string(try signed(access)), "token_type": "Bearer", "scope": .string(scopeText),
            "expires_in": .int(configuration.accessTokenLifetime.components.seconds),
        ]
        if scope.contains("openid") {
            var id: GQLValues = [
                "iss": .string(issuer), "sub": .string(user.id), "aud": .string(configuration.clientId),
                "iat": .int(issuedAt), "exp": .int(issuedAt + configuration.idTokenLifetime.components.seconds),
            ]
            id.merge(Self.profile(user, scope: scope)) { current, _ in current }
            answer["id_token"] = .string(try signed(id))
        }
        switch refresh {
        case .none:
            break
        case .new:
            let token = Self.newRefreshToken()
            let grant = AuthDirectory.RefreshGrant(
                userId: user.id, audience: audience, scope: scopeText, family: Bytes.hex(Scrypt.salt(8)))
            try change { directory throws in directory.refreshTokens[AuthDirectory.tokenKey(token)] = grant }
            answer["refresh_token"] = .string(token)
        case .rotate(let oldKey, let old):
            let token = Self.newRefreshToken()
            var grant = old
            grant.retired = false
            try change { directory throws in
                // A refresh that raced this one retired the token first: this is reuse.
                guard directory.refreshTokens[oldKey]?.retired == false else {
                    directory.revokeFamily(old.family)
                    throw Auth0Error.badRefreshToken
                }
                directory.refreshTokens[oldKey]?.retired = true
                directory.refreshTokens[AuthDirectory.tokenKey(token)] = grant
            }
            answer["refresh_token"] = .string(token)
        }
        return answer
    }

    /// The claims of `user` the scopes allow: `email`, `email_verified` with `email`; `name`, `nickname`,
    /// `updated_at` with `profile`. `sub` is always there.
    static func profile(_ user: AuthDirectory.User, scope: [String]) -> GQLValues {
        var claims: GQLValues = ["sub": .string(user.id)]
        if scope.contains("email") {
            claims["email"] = .string(user.email)
            claims["email_verified"] = .bool(user.emailVerified)
        }
        if scope.contains("profile") {
            claims["name"] = .string(user.email)
            claims["nickname"] = .string(String(user.email.prefix { $0 != "@" }))
            claims["updated_at"] = .string(user.updatedAt)
        }
        return claims
    }

    // MARK: - Revocation, passwords, profiles

    /// `POST /oauth/revoke`: the refresh token and every token rotated from its sign-in stop working. An unknown
    /// token is not an error (RFC 7009 §2.2).
    func revoke(token: String?) throws {
        guard let token, !token.isEmpty else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: token")
        }
        try change { directory throws in
            if let grant = directory.refreshTokens[AuthDirectory.tokenKey(token)] {
                directory.revokeFamily(grant.family)
            }
        }
    }

    /// `POST /dbconnections/change_password`: Auth0 e-mails a reset link; the emulator records the request
    /// (``resetEmails``). Known and unknown e-mails are answered alike.
    func changePassword(email: String?, connection: String?) throws {
        guard let email, !email.isEmpty else {
            throw Auth0Error.database("invalid_request", "Missing required parameter: email")
        }
        guard connection == configuration.connection else {
            throw Auth0Error.database("invalid_connection", "Invalid connection")
        }
        let entry = AuthDirectory.ResetEmail(
            email: email.lowercased(), connection: configuration.connection, at: GQLDate.string(from: now))
        try change { directory throws in
            directory.resetEmails.append(entry)
            if directory.resetEmails.count > 1000 { directory.resetEmails.removeFirst() }
        }
    }

    /// How many refresh tokens are live (for tests).
    var directoryRefreshTokenCount: Int { directory.withLock { $0.refreshTokens.values.filter { !$0.retired }.count } }

    /// The change-password requests received, oldest first.
    var resetEmails: [AuthDirectory.ResetEmail] { directory.withLock { $0.resetEmails } }

    /// Sets `userId`'s password (the Management API's `PATCH /api/v2/users/{id}`), which also unblocks the user.
    func setPassword(userId: String, password: String?) throws -> GQLValues {
        guard let password, !password.isEmpty else {
            throw Auth0Error.management(.badRequest, "Payload validation error: 'Missing required property: password'.", errorCode: "invalid_body")
        }
        if PasswordPolicyCheck(policy: configuration.passwordPolicy).refusal(password) != nil {
            throw Auth0Error.management(.badRequest, "PasswordStrengthError: Password is too weak", errorCode: "invalid_body")
        }
        guard directory.withLock({ $0.users[userId] }) != nil else {
            throw Auth0Error.management(.notFound, "The user does not exist.", errorCode: "inexistent_user")
        }
        let hash: AuthDirectory.PasswordHash
        do {
            hash = try AuthDirectory.PasswordHash(password, cost: configuration.passwordHashCost)
        } catch {
            throw Self.serverError
        }
        let stamp = GQLDate.string(from: now)
        let user = try change { directory throws -> AuthDirectory.User in
            guard var user = directory.users[userId] else {
                throw Auth0Error.management(.notFound, "The user does not exist.", errorCode: "inexistent_user")
            }
            user.password = hash
            user.blocked = false
            user.failedAttempts = 0
            user.updatedAt = stamp
            directory.users[userId] = user
            return user
        }
        return Self.managementView(user)
    }

    /// A user as the Management API shows one.
    static func managementView(_ user: AuthDirectory.User) -> GQLValues {
        [
            "user_id": .string(user.id), "email": .string(user.email), "email_verified": .bool(user.emailVerified),
            "created_at": .string(user.createdAt), "updated_at": .string(user.updatedAt),
            "name": .string(user.email), "nickname": .string(String(user.email.prefix { $0 != "@" })),
            "identities": [
                [
                    "connection": .string(user.connection), "provider": "auth0",
                    "user_id": .string(String(user.id.dropFirst("auth0|".count))), "isSocial": false,
                ]
            ],
        ]
    }

    /// The claims of a token this tenant signed, checked for signature, issuer, expiry and `audience`.
    func verify(_ token: String, audience: String) throws -> GQLValues {
        let verifier = JWTVerifier(issuer: issuer, audience: audience, leeway: 0)
        do {
            return try verifier.verify(token, key: .rsa(key.privateKey.publicKey), now: now).claims
        } catch {
            throw Auth0Error.oauth(.unauthorized, "invalid_token", "The access token is invalid or expired.")
        }
    }

    /// `GET /userinfo`: the profile of the access token's user, by the token's scopes.
    func userInfo(accessToken: String) throws -> GQLValues {
        let claims = try verify(accessToken, audience: issuer + "userinfo")
        guard let id = claims["sub"]?.stringValue, let user = directory.withLock({ $0.users[id] }) else {
            throw Auth0Error.oauth(.unauthorized, "invalid_token", "The access token's user does not exist.")
        }
        return Self.profile(user, scope: Self.scopes(claims["scope"]?.stringValue ?? ""))
    }

    // MARK: - Helpers

    /// Applies `body` to the directory and writes it to the data folder, under the lock (so the file follows the
    /// changes in order), also when `body` throws after changing something (a revoked family); a failed write is a
    /// server error, and the change is kept in memory.
    private func change<T>(_ body: (inout AuthDirectory) throws -> T) throws -> T {
        try directory.withLock { directory in
            let outcome = Result { try body(&directory) }
            do {
                try directory.save(to: folder)
            } catch {
                throw Self.serverError
            }
            return try outcome.get()
        }
    }

    private func signed(_ claims: GQLValues) throws -> String {
        do {
            return try key.sign(claims)
        } catch {
            throw Self.serverError
        }
    }

    /// Scopes in order, each once.
    static func scopes(_ text: String) -> [String] {
        var seen = Set<String>()
        return text.split(separator: " ").map(String.init).filter { seen.insert($0).inserted }
    }

    /// An e-mail as Auth0 keeps it (lower case), or nil when it is not one: one `@`, something on each side, no
    /// spaces or control characters, at most 254 characters.
    static func normalizedEmail(_ text: String) -> String? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { return nil }
        return text.lowercased()
    }

    /// 32 random bytes, base64url: an opaque refresh token.
    static func newRefreshToken() -> String { Base64URL.encode(Scrypt.salt(32)) }
}
