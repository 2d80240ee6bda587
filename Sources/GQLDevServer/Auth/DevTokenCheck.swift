import Foundation
import GQLCore
import GQLCrypto

/// Checks the JWTs of ``GQLDevServer/OpenIDConnect`` at the server's clock, with GQLCrypto's verifier.
struct DevTokenCheck: Sendable {
    private enum Key: Sendable {
        case single(JWTKey)
        case set(JWKSet)
    }

    private let key: Key
    private let verifier: JWTVerifier
    private let clock: @Sendable () -> Date

    /// - Throws: ``GQLError`` `.invalidArgument` for an empty secret, or a key set that cannot be read or holds
    ///   no RSA signing key.
    init(_ settings: GQLDevServer.OpenIDConnect, clock: @escaping @Sendable () -> Date) throws {
        switch settings.keys {
        case .sharedSecret(let secret):
            guard !secret.isEmpty else {
                throw GQLError(.invalidArgument, "The JWT secret must not be empty.")
            }
            key = .single(try JWTKey.secret(secret))
        case .jwks(let json):
            let set: JWKSet
            do {
                set = try JWKSet(json: json)
            } catch let error as GQLError {
                throw GQLError(.invalidArgument, "The JSON Web Key Set cannot be used: \(error.message)")
            }
            guard !set.keys.isEmpty else {
                throw GQLError(.invalidArgument, "The JSON Web Key Set holds no RSA signing key (RS256).")
            }
            key = .set(set)
        }
        let leeway = settings.leeway.seconds
        verifier = JWTVerifier(
            issuer: settings.issuer, audience: settings.audience, leeway: max(leeway, 0), requiresExpiry: true)
        self.clock = clock
    }

    /// Until when the token in an `Authorization` value (`Bearer <jwt>` or the bare JWT) is good (its `exp` plus
    /// the leeway), or why it is refused. The reason never quotes the token.
    func check(_ authorization: String) -> Result<Date, DevAuthenticator.Refusal> {
        let jwt: JWT
        do {
            jwt = try verified(authorization)
        } catch let error as GQLError {
            return .failure(DevAuthenticator.Refusal(error.message))
        } catch {
            return .failure(DevAuthenticator.Refusal("the token could not be checked"))
        }
        // `requiresExpiry` guarantees a numeric `exp`.
        let expiry = jwt.claims["exp"]?.doubleValue ?? 0
        return .success(Date(timeIntervalSince1970: expiry + verifier.leeway))
    }

    /// The `sub` of the token in an `Authorization` value when the token passes ``check(_:)``; nil otherwise.
    func subject(_ authorization: String) -> String? {
        (try? verified(authorization))?.claims["sub"]?.stringValue
    }

    /// The token of an `Authorization` value (`Bearer <jwt>` or the bare JWT), checked.
    private func verified(_ authorization: String) throws -> JWT {
        var token = Substring(authorization).drop { $0 == " " }
        if token.lowercased().hasPrefix("bearer ") { token = token.dropFirst("bearer ".count).drop { $0 == " " } }
        switch key {
        case .single(let key): return try verifier.verify(String(token), key: key, now: clock())
        case .set(let set): return try verifier.verify(String(token), keys: set, now: clock())
        }
    }

    /// Whether a token good until `deadline` has expired by now.
    func hasExpired(_ deadline: Date) -> Bool { clock() >= deadline }
}
