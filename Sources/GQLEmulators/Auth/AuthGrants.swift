import Foundation
import GQLCore
import GQLCrypto

/// The Auth0 emulator's token grants: the password grants, `refresh_token` (with rotation when configured),
/// `client_credentials` for the Management API, and the checks of the tokens it issued (`/userinfo`, the Management
/// API). The users and the refresh-token records are ``AuthUsers``'; what is signed is signed with the tenant's
/// ``AuthSigningKey`` and issued by ``issuer``. A value made by ``AuthTenant/grants`` for the domain known then.
struct AuthGrants: Sendable {
    let configuration: GQLAuthEmulator.Configuration
    let users: AuthUsers
    let key: AuthSigningKey
    /// The tenant's domain (`HOST:PORT` of the emulator unless configured).
    let domain: String

    /// The scopes of Auth0's Management API token the emulator gives `client_credentials`.
    static let managementScope = "read:users update:users"

    /// `https://<domain>/`, every token's `iss`.
    var issuer: String { "https://\(domain)/" }

    /// The audience of the Management API's tokens.
    var managementAudience: String { "https://\(domain)/api/v2/" }

    private var now: Date { configuration.clock() }

    // MARK: - Grants

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
        let user = try users.authenticate(email: username, password: password)
        let audience = audience ?? configuration.defaultAudience
        try refuseManagement(audience)
        let granted = AuthTenant.scopes(scope ?? "openid").filter { allowedUserScopes.contains($0) }
        return try issue(
            user, scope: granted, audience: audience, grant: "password",
            refresh: granted.contains("offline_access") ? .new : .none)
    }

    /// The scopes a user's sign-in can be given: OpenID Connect's and the configured API's
    /// (``GQLAuthEmulator/Configuration/apiScopes``); others are dropped, as Auth0 drops scopes an API does not
    /// define. The Management API's never, whatever is configured.
    private var allowedUserScopes: Set<String> {
        Set(["openid", "profile", "email", "offline_access"] + configuration.apiScopes)
            .subtracting(AuthTenant.scopes(Self.managementScope))
    }

    /// A user's grant for the Management API is refused: only `client_credentials` of the application reaches it.
    private func refuseManagement(_ audience: String?) throws {
        guard let audience, audience == managementAudience else { return }
        throw Auth0Error.oauth(
            .forbidden, "access_denied",
            "Client is not authorized to access \"\(audience)\". You need to create a \"client-grant\" associated "
                + "to this API.")
    }

    /// The `refresh_token` grant; `scope`, when given, must be within the sign-in's.
    func refreshGrant(token: String?, scope: String?) throws -> GQLValues {
        guard let token, !token.isEmpty else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: refresh_token")
        }
        let tokenKey = AuthDirectory.tokenKey(token)
        let (grant, user) = try users.redeemRefreshToken(tokenKey)
        try refuseManagement(grant.audience)
        let granted = AuthTenant.scopes(grant.scope).filter { allowedUserScopes.contains($0) }
        var asked = granted
        if let scope, !scope.isEmpty {
            asked = AuthTenant.scopes(scope)
            guard Set(asked).isSubset(of: Set(granted)) else {
                throw Auth0Error.oauth(
                    .forbidden, "access_denied", "The refresh token does not grant the scope asked for.")
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

    // MARK: - Issuing

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
            try users.keepRefreshToken(
                token,
                AuthDirectory.RefreshGrant(
                    userId: user.id, audience: audience, scope: scopeText, family: Bytes.hex(Scrypt.salt(8))))
            answer["refresh_token"] = .string(token)
        case .rotate(let oldKey, let old):
            let token = Self.newRefreshToken()
            try users.rotateRefreshToken(oldKey, old, to: token)
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

    // MARK: - Checking issued tokens

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
        guard let id = claims["sub"]?.stringValue, let user = users.user(id: id) else {
            throw Auth0Error.oauth(.unauthorized, "invalid_token", "The access token's user does not exist.")
        }
        return Self.profile(user, scope: AuthTenant.scopes(claims["scope"]?.stringValue ?? ""))
    }

    // MARK: - Helpers

    private func signed(_ claims: GQLValues) throws -> String {
        do {
            return try key.sign(claims)
        } catch {
            throw AuthTenant.serverError
        }
    }

    /// 32 random bytes, base64url: an opaque refresh token.
    static func newRefreshToken() -> String { Base64URL.encode(Scrypt.salt(32)) }
}
