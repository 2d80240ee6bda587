import Foundation
import GQLCore

/// A key that checks JWT signatures, pinned to one algorithm: an HMAC secret checks HS256 only, an RSA key
/// RS256 only and a P-256 key ES256 only, whatever a token's header asks for (so an HS256 token "signed" with an RSA public key as the
/// secret, or `alg: none`, is refused).
package enum JWTKey: Sendable {
    /// HS256 with a shared secret (Auth0: the client secret's UTF-8 bytes).
    case hmac(HMACSHA256.Key)
    /// RS256 with an RSA public key (from a JWKS or PEM).
    case rsa(RSAPublicKey)
    /// ES256 with a P-256 public key (OneSignal's identity-verification tokens).
    case p256(P256PublicKey)

    /// An HS256 key from a secret's UTF-8 bytes.
    package static func secret(_ secret: String) throws -> JWTKey { .hmac(try HMACSHA256.Key(Array(secret.utf8))) }

    /// The one algorithm this key checks.
    package var algorithm: String {
        switch self {
        case .hmac: "HS256"
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }
}

/// Checks a JWT's signature and its registered claims: `iss`, `aud` (a string or an array), `exp`, `nbf` and
/// `iat`, with leeway for clock skew, at an injected time.
///
/// ```swift
/// let verifier = JWTVerifier(issuer: "https://tenant.auth0.com/", audience: clientId)
/// let jwt = try verifier.verify(idToken, key: .rsa(jwks.key(id: kid)), now: Date())
/// let jwt = try verifier.verify(token, keys: jwks, now: clock())      // picks the key by the header's kid
/// ```
package struct JWTVerifier: Sendable {
    /// The `iss` a token must carry, or nil to accept any.
    package var issuer: String?
    /// A value the token's `aud` must be or contain, or nil to accept any.
    package var audience: String?
    /// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    package var leeway: TimeInterval
    /// Whether a token without `exp` is refused (OpenID Connect ID tokens always carry one).
    package var requiresExpiry: Bool
    /// For ID tokens: the client that must be the `azp` (authorized party) when one is named beside several
    /// audiences (OpenID Connect Core §3.1.3.7). Nil for access tokens, whose `azp` is the client and `aud` the API.
    package var authorizedParty: String?

    package init(
        issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 60, requiresExpiry: Bool = true,
        authorizedParty: String? = nil
    ) {
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.requiresExpiry = requiresExpiry
        self.authorizedParty = authorizedParty
    }

    /// Parses `token`, checks its signature with `key` and its claims at `now`; returns it when all hold.
    /// - Throws: ``GQLCore/GQLError`` `.invalidToken` saying which check failed.
    @discardableResult
    package func verify(_ token: String, key: JWTKey, now: Date) throws -> JWT {
        let jwt = try JWT(compact: token)
        try verify(jwt, key: key, now: now)
        return jwt
    }

    /// Parses `token` and checks it with the key of `keys` its header's `kid` names (or the set's only key when the
    /// header names none).
    @discardableResult
    package func verify(_ token: String, keys: JWKSet, now: Date) throws -> JWT {
        let jwt = try JWT(compact: token)
        try verify(jwt, key: keys.key(for: jwt), now: now)
        return jwt
    }

    /// Checks an already parsed token.
    package func verify(_ jwt: JWT, key: JWTKey, now: Date) throws {
        try checkSignature(jwt, key: key)
        try checkClaims(jwt.claims, now: now)
    }

    /// The signature check alone.
    package func checkSignature(_ jwt: JWT, key: JWTKey) throws {
        guard jwt.algorithm != "none" else { throw JWT.invalid("the token is unsigned (alg \"none\")") }
        guard jwt.algorithm == key.algorithm else {
            throw JWT.invalid("the token is signed with \(jwt.algorithm), the key checks \(key.algorithm) only")
        }
        let valid: Bool
        switch key {
        case .hmac(let secret):
            valid = try Bytes.constantTimeEquals(secret.authenticate(jwt.signingInput), jwt.signature)
        case .rsa(let publicKey):
            valid = publicKey.verify(jwt.signature, of: jwt.signingInput)
        case .p256(let publicKey):
            valid = publicKey.verify(jwt.signature, of: jwt.signingInput)
        }
        guard valid else { throw JWT.invalid("the signature does not match") }
    }

    /// The claims check alone.
    package func checkClaims(_ claims: GQLValues, now: Date) throws {
        let time = now.timeIntervalSince1970
        if let issuer {
            guard let found = claims["iss"] else { throw JWT.invalid("the token names no issuer (iss)") }
            guard found.stringValue == issuer else { throw JWT.invalid("the token's issuer is not \(issuer)") }
        }
        if let audience {
            let audiences: [String]
            switch claims["aud"] {
            case .string(let one)?: audiences = [one]
            case .array(let many)?:
                audiences = many.compactMap(\.stringValue)
                guard audiences.count == many.count else {
                    throw JWT.invalid("the token's audience list holds a non-string")
                }
            case nil: throw JWT.invalid("the token names no audience (aud)")
            default: throw JWT.invalid("the token's audience (aud) is neither a string nor an array")
            }
            guard audiences.contains(audience) else { throw JWT.invalid("the token is meant for another audience") }
        }
        if let authorizedParty, case .array(let many)? = claims["aud"], many.count > 1, let party = claims["azp"],
            party.stringValue != authorizedParty
        {
            throw JWT.invalid("the token's authorized party (azp) is another client")
        }
        if let expiry = try Self.date(claims, "exp") {
            guard time < expiry + leeway else {
                throw JWT.invalid(
                    "the token expired at \(Self.text(expiry)) (now \(Self.text(time)), leeway \(Int(leeway)) s)")
            }
        } else if requiresExpiry {
            throw JWT.invalid("the token has no expiry (exp)")
        }
        if let notBefore = try Self.date(claims, "nbf"), time + leeway < notBefore {
            throw JWT.invalid("the token is not valid before \(Self.text(notBefore)) (now \(Self.text(time)))")
        }
        if let issued = try Self.date(claims, "iat"), time + leeway < issued {
            throw JWT.invalid("the token was issued in the future, at \(Self.text(issued)) (now \(Self.text(time)))")
        }
    }

    /// A NumericDate claim (seconds since 1970, integer or not), nil when absent.
    static func date(_ claims: GQLValues, _ name: String) throws -> TimeInterval? {
        switch claims[name] {
        case nil: return nil
        case .int(let seconds)?: return TimeInterval(seconds)
        case .double(let seconds)? where seconds.isFinite: return seconds
        default: throw JWT.invalid("the token's \"\(name)\" is not a number of seconds")
        }
    }

    /// A NumericDate as the claim writes it: whole seconds since 1970.
    private static func text(_ seconds: TimeInterval) -> String {
        seconds.rounded(.down) == seconds ? String(Int64(seconds)) : String(seconds)
    }
}
