import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// A clock the tests move forward: the real time at creation plus an offset.
final class TestClock: Sendable {
    private let start = Date()
    private let offset = GQLLocked<TimeInterval>(0)

    func now() -> Date { start.addingTimeInterval(offset.withLock { $0 }) }
    func advance(_ seconds: TimeInterval) { offset.withLock { $0 += seconds } }
}

/// The Auth0-shaped tenant of Tests/Interop/auth0_peer.py, started for one test, and GQLAuth clients of it.
struct AuthTenant {
    static let domain = "tenant.test"
    static let clientId = "client-abc"
    static let clientSecret = "client-secret-7d1f"
    static let password = "correct horse battery"

    let peer: PythonPeer
    let clock = TestClock()
    private let rest: GQLREST

    /// Runs `body` against a tenant signing ID tokens with `alg`; `secret` nil makes a public client at the peer
    /// (the client then sends no secret).
    static func with(
        alg: String = "RS256", _ body: (AuthTenant) async throws -> Void
    ) async throws {
        try await PythonPeer.with(
            "auth0_peer.py",
            ["--domain", domain, "--client-id", clientId, "--client-secret", clientSecret, "--alg", alg]
        ) { peer in
            let tenant = AuthTenant(peer: peer, rest: GQLREST(baseURL: peer.ready))
            do {
                try await body(tenant)
                try await tenant.rest.shutdown()
            } catch {
                try? await tenant.rest.shutdown()
                throw error
            }
        }
    }

    /// A client of the tenant on the test clock.
    func auth(
        secret: String? = nil, tokens: GQLAuth.Storage = .memory, refreshMargin: TimeInterval = 60,
        scope: String? = nil
    ) -> GQLAuth {
        var configuration = GQLAuth.Configuration()
        configuration.clock = { [clock] in clock.now() }
        configuration.refreshMargin = refreshMargin
        if let scope { configuration.scope = scope }
        return GQLAuth(
            domain: Self.domain, clientId: Self.clientId, clientSecret: secret, tokens: tokens, baseURL: peer.ready,
            configuration: configuration)
    }

    /// How many requests of each kind the tenant answered (`token_refresh`, `revoke`, `jwks` …).
    func stats() async throws -> [String: Int64] {
        let value = try await rest.invoke(.get, "test/stats")
        return (value.objectValue ?? [:]).compactMapValues(\.intValue)
    }

    func count(_ kind: String) async throws -> Int64 { try await stats()[kind] ?? 0 }

    /// The change-password requests the tenant accepted (`{"email", "connection"}`), in order: its stand-in for the
    /// reset e-mails Auth0 sends.
    func resetEmails() async throws -> GQLValue { try await rest.invoke(.get, "test/reset_emails") }

    /// What the tenant's API answers for a bearer access token: its `sub` and `scope`.
    func apiAnswer(_ accessToken: String) async throws -> GQLValue {
        try await rest.invoke(.get, "api/private", headers: ["Authorization": "Bearer " + accessToken])
    }

    /// Changes what later answers look like (see auth0_peer.py).
    @discardableResult
    func configure(_ settings: GQLValues) async throws -> GQLValue {
        try await rest.invoke(.post, "test/config", json: .object(settings))
    }

    /// The status the tenant's API gives a request with `authorization`.
    func apiStatus(_ authorization: String) async throws -> Int {
        do {
            try await rest.invoke(.get, "api/private", headers: ["Authorization": authorization])
            return 200
        } catch let error as GQLError where error.code == .http {
            return error.httpStatus ?? 0
        }
    }

    /// A user signed up at the tenant and signed in on a fresh client.
    func signedIn(
        _ email: String = "ann@example.com", secret: String? = nil, tokens: GQLAuth.Storage = .memory
    ) async throws -> GQLAuth {
        let auth = auth(secret: secret, tokens: tokens)
        try await auth.signUp(email: email, password: Self.password)
        return auth
    }
}

/// Expects `body` to throw a ``GQLError`` with `code`; returns it.
@discardableResult
func expectAuthError(
    _ code: GQLError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> GQLError? {
    do {
        try await body()
        Issue.record("expected GQLError.\(code), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as GQLError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected GQLError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
