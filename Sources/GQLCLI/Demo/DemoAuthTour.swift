import Foundation
import GQLCore
import GQLCrypto
import GQLDevServer
import GQLNet
import GQLServices
import Logging

/// The sign-in step of `gql-cli demo`: the dev server checks bearer tokens as AppSync's OpenID Connect mode does
/// (`gql-cli serve --jwt-secret`), and GQLServer's authorization provider hands it a fresh token when the one it
/// holds has expired: the refused request is retried once, and the app never sees the 401.
///
/// The tokens come from a local stand-in for an identity provider (an HS256 secret shared with the server, the way
/// GQLAuth's tests stand in for Auth0), and the server's clock is moved forward instead of waiting an hour.
struct DemoAuthTour: DemoStep {
    static let secret = "demo-signing-secret"
    static let issuer = "https://demo-tenant.example.com/"
    static let audience = "demo-app"

    func run() async throws {
        heading("12. Signed-in requests (OpenID Connect mode, GQLServer's authorization provider)")
        let start = Date()
        let clock = GQLLocked(start)
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.openIDConnect = .init(
            keys: .sharedSecret(Self.secret), issuer: Self.issuer, audience: Self.audience)
        configuration.clock = { clock.withLock { $0 } }
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, logger: quiet)
        let task = Task { try await server.run() }
        defer { task.cancel() }
        let url = try await server.endpoints().http
        Self.say("GQLDevServer checks tokens signed for \(Self.audience) by \(Self.issuer)")

        // The identity provider's stand-in mints a token valid for an hour from the server's "now"; the provider
        // keeps it until the server refuses it.
        let issued = GQLLocked(0)
        let held = GQLLocked<String?>(nil)
        let client = GQLServer(HTTP: url) { request in
            if !request.isRetry, let token = held.withLock({ $0 }) { return token }
            let now = Int64(clock.withLock { $0 }.timeIntervalSince1970)
            let claims: GQLValues = [
                "iss": .string(Self.issuer), "aud": .string(Self.audience), "sub": "demo-user", "iat": .int(now),
                "exp": .int(now + 3600),
            ]
            let token = "Bearer " + (try JWTSigner.hs256(claims, secret: Self.secret))
            let number = issued.withLock {
                $0 += 1
                return $0
            }
            Self.say("provider: token #\(number)\(request.isRetry ? ", asked again after the server refused one" : "")")
            held.withLock { $0 = token }
            return token
        }
        let first = try await client.query("{ listObjects { items { objectId } } }")
        Self.say("query with the provider's token -> \(first.errors.isEmpty ? "answered" : "refused")")
        clock.withLock { $0 = start.addingTimeInterval(2 * 3600) }
        Self.say("two hours later (the server's clock moved): the token held has expired")
        let second = try await client.query("{ listObjects { items { objectId } } }")
        Self.say("query again -> 401, fresh token, retried once -> \(second.errors.isEmpty ? "answered" : "refused")")
        let anonymous = GQLServer(HTTP: url)
        do {
            _ = try await anonymous.query("{ listObjects { items { objectId } } }")
            Self.say("query without a token -> answered (unexpected)")
        } catch let error as GQLError {
            Self.say("query without a token -> refused, HTTP \(error.httpStatus.map(String.init) ?? "?")")
        }
        try await anonymous.shutdown()
        try await client.shutdown()
        await server.shutdown()
        _ = try? await task.value
    }
}
