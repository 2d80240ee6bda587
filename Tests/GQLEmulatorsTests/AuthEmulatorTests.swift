import Foundation
import GQLCore
import GQLCrypto
import GQLServices
import Testing

@testable import GQLEmulators

/// The Auth0 emulator under GQLAuth (the toolkit's own Auth0 client, unchanged): sign-up, sign-in, refresh,
/// revocation, password checks and changes, Auth0's refusals, the tokens' claims, and state kept across restarts.
@Suite("Auth0 emulator", .timeLimit(.minutes(1)))
struct AuthEmulatorTests {
    @Test func gqlAuthSignsUpInRefreshesAndOut() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let auth = try await fixture.signedIn(refreshMargin: 100_000)
            let userId = try #require(auth.userId())
            #expect(userId.hasPrefix("auth0|") && userId.count == "auth0|".count + 24)
            #expect(auth.email() == "ann@example.com")
            // A margin beyond the lifetime: every call refreshes (tokens made in the same second are the same
            // bytes, as RS256 is deterministic); the refreshed token is good at /userinfo.
            _ = try await auth.accessToken()
            let second = try await auth.accessToken()
            let profile = try await fixture.rest.invoke(
                .get, "userinfo", headers: ["Authorization": "Bearer \(second)"])
            #expect(profile["sub"]?.stringValue == userId)
            #expect(profile["email"] == "ann@example.com")

            await auth.signOut()
            #expect(!auth.isSignedIn)
            #expect(fixture.emulator.tenant.users.liveRefreshTokenCount == 0)  // revoked at sign-out
            // E-mails are case-insensitive, as Auth0's.
            let again = fixture.auth()
            try await again.signIn(email: "ANN@example.com", password: AuthEmulatorFixture.password)
            #expect(again.userId() == userId)
            try await again.shutdown()
            try await auth.shutdown()
        }
    }

    @Test func auth0sRefusalsBecomeGQLAuthsErrors() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let auth = try await fixture.signedIn()
            await expectError(.userExists) {
                try await fixture.auth().signUp(email: "ann@example.com", password: AuthEmulatorFixture.password)
            }
            await expectError(.passwordTooWeak) {
                try await fixture.auth().signUp(email: "b@example.com", password: "x")
            }
            await expectError(.wrongCredentials) {
                try await fixture.auth().signIn(email: "ann@example.com", password: "wrong password")
            }
            await expectError(.wrongCredentials) {
                try await fixture.auth().signIn(email: "nobody@example.com", password: "whatever")
            }
            try await auth.checkPassword(password: AuthEmulatorFixture.password)
            await expectError(.wrongCredentials) { try await auth.checkPassword(password: "nope nope") }
            #expect(auth.isSignedIn)
            try await auth.shutdown()
        }
    }

    @Test func passwordsChangeThroughTheManagementAPIOrAResetEmail() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let trusted = try await fixture.signedIn(secret: true)
            #expect(try await trusted.updatePassword(password: "a brand new one") == .changed)
            await expectError(.wrongCredentials) {
                try await fixture.auth().signIn(email: "ann@example.com", password: AuthEmulatorFixture.password)
            }
            try await fixture.auth().signIn(email: "ann@example.com", password: "a brand new one")
            await expectError(.passwordTooWeak) { _ = try await trusted.updatePassword(password: "x") }

            let app = try await fixture.signedIn("bea@example.com")
            #expect(try await app.updatePassword(password: "ignored") == .emailSent)
            let emails = try await fixture.rest.invoke(.get, "_emulator/reset-emails")
            #expect(emails.arrayValue?.compactMap { $0["email"]?.stringValue } == ["bea@example.com"])
            try await trusted.shutdown()
            try await app.shutdown()
        }
    }

    @Test func tokensCarryAuth0sClaimsAndVerifyWithTheJWKS() async throws {
        try await AuthEmulatorFixture.with(configure: { $0.defaultAudience = "https://api.example.com" }) { fixture in
            _ = try await fixture.rest.invoke(
                .post, "dbconnections/signup",
                json: [
                    "client_id": .string(fixture.emulator.configuration.clientId), "email": "cy@example.com",
                    "password": .string(AuthEmulatorFixture.password),
                    "connection": "Username-Password-Authentication",
                ])
            let answer = try await fixture.token([
                "grant_type": "http://auth0.com/oauth/grant-type/password-realm", "username": "cy@example.com",
                "password": AuthEmulatorFixture.password, "realm": "Username-Password-Authentication",
                "scope": "openid email offline_access",
            ])
            #expect(answer["token_type"] == "Bearer")
            #expect(answer["expires_in"] == 86_400)
            #expect(answer["refresh_token"]?.stringValue?.isEmpty == false)
            let keys = try JWKSet(json: try await fixture.rest.invoke(.get, ".well-known/jwks.json").jsonData())
            let issuer = fixture.emulator.issuer
            #expect(issuer == "https://\(fixture.emulator.domain)/")
            let clientId = fixture.emulator.configuration.clientId
            let id = try JWTVerifier(issuer: issuer, audience: clientId)
                .verify(try #require(answer["id_token"]?.stringValue), keys: keys, now: Date())
            #expect(id.claims["email"] == "cy@example.com")
            #expect(id.claims["email_verified"] == false)
            #expect(id.claims["name"] == nil)  // no `profile` scope
            let access = try JWTVerifier(issuer: issuer, audience: "https://api.example.com")
                .verify(try #require(answer["access_token"]?.stringValue), keys: keys, now: Date())
            #expect(access.claims["sub"] == id.claims["sub"])
            #expect(access.claims["azp"]?.stringValue == clientId)
            #expect(access.claims["scope"] == "openid email offline_access")
            #expect(access.claims["aud"] == ["https://api.example.com", .string(issuer + "userinfo")])
            #expect(access.header["kid"] != nil)

            let discovery = try await fixture.rest.invoke(.get, ".well-known/openid-configuration")
            #expect(discovery["issuer"]?.stringValue == issuer)
            #expect(discovery["jwks_uri"]?.stringValue == fixture.started.url + "/.well-known/jwks.json")
            #expect(discovery["id_token_signing_alg_values_supported"] == ["RS256"])
        }
    }

    @Test func rotatedRefreshTokensWorkOnceAndReuseEndsTheSignIn() async throws {
        try await AuthEmulatorFixture.with(configure: { $0.rotateRefreshTokens = true }) { fixture in
            // GQLAuth keeps the newest refresh token: every refresh works.
            let auth = try await fixture.signedIn(refreshMargin: 100_000)
            for _ in 0..<3 { _ = try await auth.accessToken() }
            try await auth.shutdown()

            _ = try await fixture.signedIn("dee@example.com")
            let signIn = try await fixture.token([
                "grant_type": "password", "username": "dee@example.com", "password": AuthEmulatorFixture.password,
                "scope": "openid offline_access",
            ])
            let first = try #require(signIn["refresh_token"]?.stringValue)
            let rotated = try await fixture.token(["grant_type": "refresh_token", "refresh_token": first])
            let second = try #require(rotated["refresh_token"]?.stringValue)
            #expect(second != first)
            // Presenting the retired token again revokes the whole family, the newest token included.
            let reuse = await fixture.refusal {
                _ = try await fixture.token(["grant_type": "refresh_token", "refresh_token": first])
            }
            #expect(reuse.status == 403 && reuse.code == "invalid_grant")
            let after = await fixture.refusal {
                _ = try await fixture.token(["grant_type": "refresh_token", "refresh_token": second])
            }
            #expect(after.status == 403 && after.code == "invalid_grant")
        }
    }

    @Test func usersAndTheSigningKeySurviveARestartWithoutAnyPasswordInClear() async throws {
        let folder = try GQLDataFolder.temporary(prefix: "auth-restart")
        defer { try? FileManager.default.removeItem(at: folder.url) }
        var firstKeys = ""
        try await AuthEmulatorFixture.with(folder) { fixture in
            let auth = try await fixture.signedIn()
            try await auth.shutdown()
            firstKeys = try await fixture.rest.invoke(.get, ".well-known/jwks.json").jsonString()
        }
        let stored = try String(contentsOf: folder.url.appendingPathComponent("tenant.json"), encoding: .utf8)
        #expect(!stored.contains(AuthEmulatorFixture.password))
        #expect(stored.contains("ann@example.com"))
        for file in ["tenant.json", "signing-key.pem"] {
            let mode =
                try FileManager.default.attributesOfItem(atPath: folder.url.appendingPathComponent(file).path)[
                    .posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        try await AuthEmulatorFixture.with(folder) { fixture in
            #expect(try await fixture.rest.invoke(.get, ".well-known/jwks.json").jsonString() == firstKeys)
            let auth = fixture.auth()
            try await auth.signIn(email: "ann@example.com", password: AuthEmulatorFixture.password)
            #expect(auth.isSignedIn)
            try await auth.shutdown()
        }
    }
}
