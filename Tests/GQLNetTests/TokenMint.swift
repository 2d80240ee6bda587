import Foundation
import GQLCore
import GQLCrypto
import GQLDevServer
import GQLNet

/// A clock the test moves by hand; the dev server checks tokens against it.
final class TestClock: Sendable {
    private let now = GQLLocked(Date(timeIntervalSince1970: 1_800_000_000))

    var date: Date { now.withLock { $0 } }

    func advance(seconds: TimeInterval) { now.withLock { $0 += seconds } }
}

/// An identity provider in miniature: mints HS256 tokens valid for a minute at the test's clock, hands the
/// current one to `GQLServer` as its authorization provider (a fresh one when asked to retry), and records every
/// request.
final class TokenMint: Sendable {
    static let secret = "dev-jwt-secret"
    static let issuer = "https://tenant.example.com/"
    static let audience = "gqlite-app"

    let clock: TestClock
    let lifetime: TimeInterval
    private let state = GQLLocked<(current: String?, minted: Int, asked: [GQLServer.AuthorizationRequest])>(
        (nil, 0, []))

    init(clock: TestClock, lifetime: TimeInterval = 60) {
        self.clock = clock
        self.lifetime = lifetime
    }

    /// The dev server's settings that accept these tokens, at the test's clock.
    static func configuration(_ clock: TestClock) -> GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.openIDConnect = .init(keys: .sharedSecret(secret), issuer: issuer, audience: audience)
        configuration.clock = { clock.date }
        return configuration
    }

    /// What `GQLServer` asked, in order.
    var asked: [GQLServer.AuthorizationRequest] { state.withLock { $0.asked } }
    /// How many tokens were minted.
    var minted: Int { state.withLock { $0.minted } }

    /// The provider: the held token, or a new one the first time and on a retry.
    var provider: GQLServer.AuthorizationProvider {
        { [self] request in
            let claims = state.withLock { state -> GQLValues? in
                state.asked.append(request)
                guard state.current == nil || request.isRetry else { return nil }
                state.minted += 1
                return self.claims(serial: state.minted)
            }
            if let claims {
                let token = "Bearer " + (try JWTSigner.hs256(claims, secret: Self.secret))
                state.withLock { $0.current = token }
            }
            return state.withLock { $0.current }
        }
    }

    /// Claims as an OpenID provider issues them, `exp` a lifetime from now.
    func claims(serial: Int, audience: String = audience, expiresIn: TimeInterval? = nil) -> GQLValues {
        let now = clock.date.timeIntervalSince1970
        return [
            "iss": .string(Self.issuer), "sub": "user-1", "aud": .string(audience), "jti": .string("t\(serial)"),
            "iat": .int(Int64(now)), "exp": .int(Int64(now + (expiresIn ?? lifetime))),
        ]
    }

    /// A token with these claims, signed with `secret`.
    static func token(_ claims: GQLValues, secret: String = secret) throws -> String {
        "Bearer " + (try JWTSigner.hs256(claims, secret: secret))
    }
}
