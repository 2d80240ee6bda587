import Foundation
import GQLCore
import GQLCrypto

/// Checks Auth0 ID tokens before ``GQLAuth`` trusts them: RS256 against the tenant's JWKS, or HS256 with the
/// client secret; issuer `https://<domain>/`, audience the client id, and the times with leeway.
///
/// The JWKS is fetched from `/.well-known/jwks.json` on first use and cached; a token naming a `kid` the cached
/// set lacks (the tenant rotated its key) fetches it again, at most once per ``refetchInterval`` so a stream of
/// forged kids cannot make every check a request.
final class IDTokenVerifier: Sendable {
    let claims: JWTVerifier
    private let hmacKey: JWTKey?
    private let rest: GQLREST
    private let cache = GQLLocked<Cache>(Cache())
    /// The shortest time between two fetches caused by unknown kids.
    let refetchInterval: TimeInterval = 30

    private struct Cache {
        var keys: JWKSet?
        var fetchedAt: Date?
        var fetch: Task<JWKSet, any Error>?
    }

    init(issuer: String, clientId: String, clientSecret: String?, leeway: TimeInterval, rest: GQLREST) {
        claims = JWTVerifier(issuer: issuer, audience: clientId, leeway: leeway, authorizedParty: clientId)
        hmacKey = clientSecret.flatMap { try? JWTKey.secret($0) }
        self.rest = rest
    }

    /// The token's verified claims at `now`.
    /// - Throws: ``GQLCore/GQLError`` `.invalidToken` when it fails a check; the JWKS fetch's errors.
    func verify(_ token: String, now: Date) async throws -> GQLValues {
        let jwt = try JWT(compact: token)
        let key: JWTKey
        switch jwt.algorithm {
        case "HS256":
            guard let hmacKey else {
                throw GQLError(
                    .invalidToken,
                    "JWT refused: the ID token is HS256 but this GQLAuth has no client secret to check it")
            }
            key = hmacKey
        case "RS256":
            key = try await rsaKey(for: jwt, now: now)
        default:
            throw GQLError(
                .invalidToken, "JWT refused: the ID token is signed with \(jwt.algorithm); RS256 or HS256 expected")
        }
        try claims.verify(jwt, key: key, now: now)
        return jwt.claims
    }

    private func rsaKey(for jwt: JWT, now: Date) async throws -> JWTKey {
        let (cached, fetchedAt) = cache.withLock { ($0.keys, $0.fetchedAt) }
        if let cached {
            if let key = try? cached.key(for: jwt) { return key }
            // An unknown kid right after a fetch is refused without asking again.
            if let fetchedAt, abs(now.timeIntervalSince(fetchedAt)) < refetchInterval {
                return try cached.key(for: jwt)
            }
        }
        return try await fetch(now: now).key(for: jwt)
    }

    /// One fetch of the JWKS, shared by every caller that needs it at the same time.
    private func fetch(now: Date) async throws -> JWKSet {
        let task = cache.withLock { cache in
            if let fetch = cache.fetch { return fetch }
            let rest = self.rest
            let fetch = Task { () throws -> JWKSet in
                let document = try await rest.invoke(.get, ".well-known/jwks.json")
                return try JWKSet(json: document.jsonData())
            }
            cache.fetch = fetch
            return fetch
        }
        do {
            let keys = try await task.value
            cache.withLock { cache in
                cache.keys = keys
                cache.fetchedAt = now
                cache.fetch = nil
            }
            return keys
        } catch {
            cache.withLock { $0.fetch = nil }
            throw error
        }
    }
}
