import Foundation
import GQLCore
import GQLNet
import Testing

@testable import GQLServices

/// GQLAuth's tokens against the Auth0-shaped tenant of Tests/Interop/auth0_peer.py, with time moved by an injected
/// clock: refresh ahead of expiry and after a 401, one refresh for concurrent callers, refresh failure, and ID
/// tokens that must be refused.
@Suite(.serialized) struct AuthTokenTests {
    @Test func accessTokensAreRefreshedAheadOfExpiry() async throws {
        try await AuthTenant.with { tenant in
            try await tenant.configure(["expires_in": 3600])
            let auth = try await tenant.signedIn()
            let first = try await auth.accessToken()
            tenant.clock.advance(3600 - 61)
            #expect(try await auth.accessToken() == first, "61 s left: kept (margin 60 s)")
            #expect(try await tenant.count("token_refresh") == 0)
            tenant.clock.advance(2)
            let second = try await auth.accessToken()
            #expect(second != first)
            #expect(try await tenant.count("token_refresh") == 1)
            #expect(try await tenant.apiStatus("Bearer " + second) == 200)
            #expect(try await auth.accessToken() == second, "the new token lasts another hour")
            #expect(auth.userId()?.hasPrefix("auth0|") == true)
            try await auth.shutdown()
        }
    }

    @Test func aRefreshKeepsTheScopeOfTheSignIn() async throws {
        try await AuthTenant.with { tenant in
            // GQLAuth asks for no scope when it refreshes, so Auth0 answers the sign-in's (not a fixed list).
            let scope = "openid email offline_access"
            let auth = tenant.auth(scope: scope)
            try await auth.signUp(email: "ann@example.com", password: AuthTenant.password)
            let first = try await auth.accessToken()
            #expect(try await tenant.apiAnswer(first)["scope"] == .string(scope))
            let second = try await auth.accessToken(forceRefresh: true)
            #expect(second != first)
            #expect(try await tenant.apiAnswer(second)["scope"] == .string(scope))
            #expect(try await tenant.count("token_refresh") == 1)
            try await auth.shutdown()
        }
    }

    @Test func aRefusedTokenIsRefreshedOnceForEveryoneItWasRefusedTo() async throws {
        try await AuthTenant.with { tenant in
            let auth = try await tenant.signedIn()
            let refused = try #require(try await auth.authorizationValue())
            try await tenant.configure(["reject_access_tokens": true])
            #expect(try await tenant.apiStatus(refused) == 401)
            let fresh = try #require(try await auth.authorizationValue(rejected: refused))
            #expect(fresh != refused)
            #expect(try await tenant.apiStatus(fresh) == 200)
            // A second request refused with the same old value gets the new one, without a second refresh; so does
            // GQLServer's retry through the provider.
            #expect(try await auth.authorizationValue(rejected: refused) == fresh)
            let provider = auth.authorization
            #expect(try await provider(.init(transport: .webSocket, isRetry: true, rejected: refused)) == fresh)
            #expect(try await provider(.init(transport: .http)) == fresh)
            #expect(try await tenant.count("token_refresh") == 1)
            #expect(try await auth.accessToken(forceRefresh: true) != String(fresh.dropFirst(7)))
            #expect(try await tenant.count("token_refresh") == 2)
            try await auth.shutdown()
        }
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        try await AuthTenant.with { tenant in
            try await tenant.configure(["expires_in": 600])
            let auth = try await tenant.signedIn()
            let old = try await auth.accessToken()
            // The tenant holds each refresh a moment, so the callers below overlap it.
            try await tenant.configure(["refresh_delay": 0.3])
            tenant.clock.advance(600)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        index % 2 == 0
                            ? try await auth.accessToken()
                            : String((try await auth.authorizationValue(rejected: "Bearer " + old) ?? "").dropFirst(7))
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(!tokens.contains(old))
            #expect(try await tenant.count("token_refresh") == 1)
            try await auth.shutdown()
        }
    }

    @Test func aRefusedRefreshTokenSignsOut() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gqlauth-\(UUID().uuidString).json")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await AuthTenant.with { tenant in
            let auth = try await tenant.signedIn(tokens: .file(path))
            try await tenant.configure(["revoke_refresh_tokens": true])
            tenant.clock.advance(86_400)
            let error = await expectAuthError(.signedOut) { _ = try await auth.accessToken() }
            #expect(error?.serviceCode == "invalid_grant")
            #expect(!auth.isSignedIn)
            #expect(auth.userId() == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
            try await auth.shutdown()
        }
    }

    @Test func aNetworkFailureDuringRefreshKeepsTheSession() async throws {
        try await AuthTenant.with { tenant in
            let auth = try await tenant.signedIn()
            tenant.clock.advance(86_400)
            await tenant.stop()
            await expectAuthError(.connection) { _ = try await auth.accessToken() }
            #expect(auth.isSignedIn, "only Auth0's refusal ends a session")
            try await auth.shutdown()
        }
    }

    @Test func forgedExpiredAndMisdirectedIDTokensAreRefused() async throws {
        try await AuthTenant.with { tenant in
            try await tenant.signedIn().shutdown()
            let auth = tenant.auth()
            let cases: [(GQLValues, String)] = [
                (["forge": true], "signature does not match"),
                (["exp_offset": -40_000], "expired"),
                (["aud": "another-client"], "another audience"),
                (["iss": "https://evil.test/"], "issuer is not https://tenant.test/"),
                (["alg": "HS256"], "no client secret"),
            ]
            for (override, reason) in cases {
                try await tenant.configure(["id_token": .object(override)])
                let error = await expectAuthError(.invalidToken) {
                    try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
                }
                #expect(error?.message.contains(reason) == true, "\(override): \(error?.message ?? "")")
                #expect(!auth.isSignedIn, "\(override)")
                #expect(auth.userId() == nil)
            }
            // A refresh that brings a bad ID token is refused too, and the old session stays as it was.
            try await tenant.configure(["id_token": [:]])
            try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            let userId = auth.userId()
            try await tenant.configure(["id_token": ["forge": true]])
            await expectAuthError(.invalidToken) { _ = try await auth.accessToken(forceRefresh: true) }
            #expect(auth.userId() == userId)
            try await auth.shutdown()
        }
    }

    @Test func hs256IDTokensAreCheckedWithTheClientSecret() async throws {
        try await AuthTenant.with(alg: "HS256") { tenant in
            let auth = try await tenant.signedIn(secret: AuthTenant.clientSecret)
            #expect(auth.userId()?.hasPrefix("auth0|") == true)
            #expect(try await tenant.count("jwks") == 0)
            // A public client (no secret) cannot check HS256 tokens, so it refuses them.
            let other = tenant.auth()
            let error = await expectAuthError(.invalidToken) {
                try await other.signIn(email: "ann@example.com", password: AuthTenant.password)
            }
            #expect(error?.message.contains("no client secret") == true)
            #expect(!other.isSignedIn)
            try await auth.shutdown()
            try await other.shutdown()
        }
    }

    @Test func concurrentSignInsFetchTheJWKSOnce() async throws {
        try await AuthTenant.with { tenant in
            try await tenant.signedIn().shutdown()
            let jwksBefore = try await tenant.count("jwks")
            let auth = tenant.auth()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await auth.signIn(email: "ann@example.com", password: AuthTenant.password) }
                }
                try await group.waitForAll()
            }
            #expect(auth.isSignedIn)
            #expect(try await tenant.count("jwks") == jwksBefore.map { $0 + 1 })
            try await auth.shutdown()
        }
    }

    @Test func theJWKSIsCachedAndFetchedAgainForANewKey() async throws {
        try await AuthTenant.with { tenant in
            let auth = try await tenant.signedIn()
            try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            #expect(try await tenant.count("jwks") == 1, "cached")
            try await tenant.configure(["rotate_key": true])
            // Right after a fetch an unknown kid is refused without asking again (no fetch per forged kid) …
            await expectAuthError(.invalidToken) {
                try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            }
            #expect(try await tenant.count("jwks") == 1)
            // … and fetched once the interval has passed.
            tenant.clock.advance(31)
            try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            #expect(try await tenant.count("jwks") == 2)
            try await auth.shutdown()
        }
    }
}
