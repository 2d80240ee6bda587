import Foundation
import GQLCore
import GQLEmulators
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

/// The Auth0-shaped servers GQLAuth's suites run against: the stand-in of Tests/Interop/auth0_peer.py, and
/// GQLEmulators' Auth0 emulator (what `gql-cli serve --auth` runs).
enum AuthServer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case standIn
    case emulator

    var testDescription: String { self == .standIn ? "auth0_peer.py" : "GQLAuthEmulator" }
}

/// An Auth0-shaped tenant started for one test (``AuthServer``), and GQLAuth clients of it. The stand-in has test
/// hooks the emulator has not (request counts, `configure`); what both have is asked of both alike.
struct AuthTenant {
    static let domain = "tenant.test"
    static let clientId = "client-abc"
    static let clientSecret = "client-secret-7d1f"
    static let password = "correct horse battery"

    let server: AuthServer
    /// Where the tenant listens.
    let url: String
    let clock = TestClock()
    private let rest: GQLREST
    private let stopServer: @Sendable () async -> Void

    /// Stops the tenant's server (the next request gets no connection).
    func stop() async { await stopServer() }

    /// Runs `body` against `server`; the stand-in signs ID tokens with `alg` (the emulator always with RS256).
    static func with(
        _ server: AuthServer = .standIn, alg: String = "RS256", _ body: (AuthTenant) async throws -> Void
    ) async throws {
        switch server {
        case .standIn:
            try await PythonPeer.with(
                "auth0_peer.py",
                ["--domain", domain, "--client-id", clientId, "--client-secret", clientSecret, "--alg", alg]
            ) { peer in
                let tenant = AuthTenant(
                    server: server, url: peer.ready, rest: GQLREST(baseURL: peer.ready),
                    stopServer: { await peer.stop() })
                try await run(tenant, body)
            }
        case .emulator:
            var configuration = GQLAuthEmulator.Configuration()
            configuration.port = 0
            configuration.domain = domain
            configuration.clientId = clientId
            configuration.clientSecret = clientSecret
            // RFC 7914's interactive cost takes tens of milliseconds a hash; the suites hash dozens of passwords.
            configuration.passwordHashCost = .init(n: 1 << 10, r: 8, p: 1)
            let started = try await GQLAuthEmulator(configuration: configuration).start()
            do {
                let tenant = AuthTenant(
                    server: server, url: started.url, rest: GQLREST(baseURL: started.url),
                    stopServer: { await started.shutdown() })
                try await run(tenant, body)
            } catch {
                await started.shutdown()
                throw error
            }
            await started.shutdown()
        }
    }

    private static func run(_ tenant: AuthTenant, _ body: (AuthTenant) async throws -> Void) async throws {
        do {
            try await body(tenant)
            try await tenant.rest.shutdown()
        } catch {
            try? await tenant.rest.shutdown()
            throw error
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
            domain: Self.domain, clientId: Self.clientId, clientSecret: secret, tokens: tokens, baseURL: url,
            configuration: configuration)
    }

    /// How many requests of each kind the stand-in answered (`token_refresh`, `revoke`, `jwks` …); nil from the
    /// emulator, which does not count them.
    func stats() async throws -> [String: Int64]? {
        guard server == .standIn else { return nil }
        let value = try await rest.invoke(.get, "test/stats")
        return (value.objectValue ?? [:]).compactMapValues(\.intValue)
    }

    /// How many requests of `kind` the stand-in answered; nil from the emulator.
    func count(_ kind: String) async throws -> Int64? {
        guard let stats = try await stats() else { return nil }
        return stats[kind] ?? 0
    }

    /// The change-password requests the tenant accepted (`{"email", "connection"}`), in order: its stand-in for the
    /// reset e-mails Auth0 sends (the emulator's `GET /_emulator/reset-emails`, without its time stamps).
    func resetEmails() async throws -> GQLValue {
        switch server {
        case .standIn:
            return try await rest.invoke(.get, "test/reset_emails")
        case .emulator:
            let emails = try await rest.invoke(.get, "_emulator/reset-emails").arrayValue ?? []
            return .array(emails.map { ["email": $0["email"] ?? .null, "connection": $0["connection"] ?? .null] })
        }
    }

    /// What the tenant's API answers for a bearer access token: its `sub` and `scope` (stand-in only).
    func apiAnswer(_ accessToken: String) async throws -> GQLValue {
        try await rest.invoke(.get, "api/private", headers: ["Authorization": "Bearer " + accessToken])
    }

    /// Changes what later answers look like (see auth0_peer.py; stand-in only).
    @discardableResult
    func configure(_ settings: GQLValues) async throws -> GQLValue {
        try await rest.invoke(.post, "test/config", json: .object(settings))
    }

    /// The status the tenant's API gives a request with `authorization`: the stand-in's `/api/private`, the
    /// emulator's `/userinfo` (the API its access tokens are for when no audience is named).
    func apiStatus(_ authorization: String) async throws -> Int {
        do {
            try await rest.invoke(
                .get, server == .standIn ? "api/private" : "userinfo", headers: ["Authorization": authorization])
            return 200
        } catch let error as GQLError where error.code == .http {
            return error.httpStatus ?? 0
        }
    }

    /// Blocks a user as an administrator would: the stand-in's hook, or the Management API's
    /// `PATCH /api/v2/users/{id}` with `blocked: true` at the emulator (with the application's own token).
    func block(email: String, userId: String) async throws {
        switch server {
        case .standIn:
            try await configure(["block": [.string(email)]])
        case .emulator:
            let grant = try await rest.invoke(
                .post, "oauth/token",
                form: [
                    "grant_type": "client_credentials", "client_id": Self.clientId, "client_secret": Self.clientSecret,
                    "audience": "https://\(Self.domain)/api/v2/",
                ])
            let token = try #require(grant["access_token"]?.stringValue)
            let encoded = userId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? userId
            let user = try await rest.invoke(
                .patch, "api/v2/users/\(encoded)", json: ["blocked": true],
                headers: ["Authorization": "Bearer " + token])
            #expect(user["blocked"] == true)
        }
    }

    /// Whether `refreshToken` still gives tokens (a `refresh_token` grant of the public client).
    func refreshes(_ refreshToken: String) async throws -> Bool {
        do {
            let answer = try await rest.invoke(
                .post, "oauth/token",
                form: ["grant_type": "refresh_token", "client_id": Self.clientId, "refresh_token": refreshToken])
            return answer["access_token"]?.stringValue != nil
        } catch let error as GQLError where error.httpStatus == 403 {
            return false
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

extension GQLAuth {
    /// The session's refresh token (nil when signed out or none was given).
    var refreshTokenForTests: String? { state.withLock { $0.tokens?.refreshToken } }
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
