import Foundation
import GQLCore
import Testing

@testable import GQLServices

/// GQLAuth's sessions against both Auth0-shaped tenants (``AuthServer``: the stand-in of
/// Tests/Interop/auth0_peer.py and GQLEmulators' Auth0 emulator): sign-up, sign-in, sign-out, Auth0's refusals,
/// password checks and changes, and the token file.
@Suite(.serialized) struct AuthSessionTests {
    @Test(arguments: AuthServer.allCases) func signUpSignInAndSignOut(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            let auth = try await tenant.signedIn()
            let userId = try #require(auth.userId())
            #expect(userId.hasPrefix("auth0|"))
            #expect(auth.email() == "ann@example.com")
            let token = try await auth.accessToken()
            #expect(try await tenant.apiStatus("Bearer " + token) == 200)
            #expect(try await tenant.apiStatus("Bearer not-a-token") == 401)
            #expect(try await auth.authorizationValue() == "Bearer " + token)

            // A second sign-in on another client is another session of the same user, with a refresh token of
            // its own (the emulator's JWT access tokens of one user in one second may be equal; sessions are not).
            let other = tenant.auth()
            try await other.signIn(email: "ann@example.com", password: AuthTenant.password)
            #expect(other.userId() == userId)
            let refresh = try #require(auth.refreshTokenForTests)
            let otherRefresh = try #require(other.refreshTokenForTests)
            #expect(refresh != otherRefresh)

            await auth.signOut()
            #expect(!auth.isSignedIn)
            #expect(auth.userId() == nil)
            #expect(try await auth.authorizationValue() == nil)
            // Signing out revoked this session's refresh token at the tenant, and only this one.
            #expect(try await !tenant.refreshes(refresh))
            #expect(try await tenant.refreshes(otherRefresh))
            if let revocations = try await tenant.count("revoke") { #expect(revocations == 1) }
            await expectAuthError(.signedOut) { _ = try await auth.accessToken() }
            #expect(other.isSignedIn)
            try await auth.shutdown()
            try await other.shutdown()
        }
    }

    @Test(arguments: AuthServer.allCases) func auth0RefusalsBecomeClearErrors(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            let auth = try await tenant.signedIn()
            let wrong = await expectAuthError(.wrongCredentials) {
                try await auth.signIn(email: "ann@example.com", password: "not-the-password-42")
            }
            #expect(wrong?.serviceCode == "invalid_grant")
            #expect(wrong?.httpStatus == 403)
            #expect(wrong.map { !"\($0)".contains("not-the-password-42") } == true)
            #expect(auth.isSignedIn, "a failed sign-in leaves the session alone")

            await expectAuthError(.userExists) {
                try await auth.signUp(email: "ann@example.com", password: AuthTenant.password)
            }
            let weak = await expectAuthError(.passwordTooWeak) {
                try await auth.signUp(email: "bob@example.com", password: "short")
            }
            #expect(weak?.message.contains("Password is too weak") == true)

            try await tenant.block(email: "ann@example.com", userId: try #require(auth.userId()))
            await expectAuthError(.blocked) {
                try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            }

            // Ten wrong passwords in a row block the account (Auth0's brute-force protection): the next attempt
            // is refused as too many, whatever the password.
            try await tenant.signedIn("eve@example.com").shutdown()
            for _ in 0..<10 {
                await expectAuthError(.wrongCredentials) {
                    try await auth.signIn(email: "eve@example.com", password: "guess-1234")
                }
            }
            await expectAuthError(.tooManyAttempts) {
                try await auth.signIn(email: "eve@example.com", password: "guess-1234")
            }

            let signedOut = tenant.auth()
            await expectAuthError(.signedOut) { _ = try await signedOut.accessToken() }
            await expectAuthError(.signedOut) { try await signedOut.checkPassword(password: AuthTenant.password) }
            await expectAuthError(.signedOut) { try await signedOut.updatePassword(password: "new password 1") }
            try await auth.shutdown()
            try await signedOut.shutdown()
        }
    }

    @Test func unreachableTenantIsAConnectionError() async throws {
        let auth = GQLAuth(domain: AuthTenant.domain, clientId: AuthTenant.clientId, baseURL: "http://127.0.0.1:9")
        await expectAuthError(.connection) { try await auth.signIn(email: "ann@example.com", password: "x") }
        try await auth.shutdown()
    }

    @Test(arguments: AuthServer.allCases) func checkPasswordKeepsTheSession(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            let auth = try await tenant.signedIn()
            let token = try await auth.accessToken()
            let refresh = auth.refreshTokenForTests
            let passwordGrants = try await tenant.count("token_password")
            try await auth.checkPassword(password: AuthTenant.password)
            await expectAuthError(.wrongCredentials) { try await auth.checkPassword(password: "wrong password 9") }
            if let passwordGrants { #expect(try await tenant.count("token_password") == passwordGrants + 2) }
            #expect(auth.refreshTokenForTests == refresh)
            #expect(try await auth.accessToken() == token)
            #expect(auth.isSignedIn)
            try await auth.shutdown()
        }
    }

    @Test(arguments: AuthServer.allCases)
    func updatePasswordThroughTheManagementAPIWithASecret(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            let auth = try await tenant.signedIn(secret: AuthTenant.clientSecret)
            await expectAuthError(.passwordTooWeak) { try await auth.updatePassword(password: "short") }
            #expect(try await auth.updatePassword(password: "a new long password") == .changed)
            if let patches = try await tenant.count("management_patch") { #expect(patches == 2) }
            await expectAuthError(.wrongCredentials) {
                try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            }
            try await auth.signIn(email: "ann@example.com", password: "a new long password")
            try await auth.shutdown()
        }
    }

    @Test(arguments: AuthServer.allCases)
    func updatePasswordSendsTheResetEmailWithoutASecret(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            let auth = try await tenant.signedIn()
            #expect(try await auth.updatePassword(password: "ignored without a secret") == .emailSent)
            // The stand-in refuses a body without Auth0's required fields (client_id, email, connection): the
            // request it accepted is the one the reset e-mail would go out for.
            #expect(
                try await tenant.resetEmails() == [
                    ["email": "ann@example.com", "connection": "Username-Password-Authentication"]
                ])
            if let grants = try await tenant.count("token_client_credentials") { #expect(grants == 0) }
            try await auth.shutdown()
        }
    }

    @Test(arguments: AuthServer.allCases)
    func tokenFileSurvivesARestartWithOwnerOnlyPermissions(_ server: AuthServer) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gqlauth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nested/tokens.json").path
        try await AuthTenant.with(server) { tenant in
            let first = try await tenant.signedIn(tokens: .file(path))
            let token = try await first.accessToken()
            let userId = first.userId()
            try await first.shutdown()
            #expect(try Self.mode(path) == 0o600)
            #expect(try Self.mode(directory.appendingPathComponent("nested").path) == 0o700)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains(token), "the file holds the tokens")

            // A new process: the same user, the same token, no request to the tenant (the stand-in counts them;
            // the emulator is stopped meanwhile, so a request could not have been answered).
            let grants = try await tenant.stats()
            if server == .emulator { await tenant.stop() }
            let second = tenant.auth(tokens: .file(path))
            #expect(second.userId() == userId)
            #expect(try await second.accessToken() == token)
            if server == .standIn { #expect(try await tenant.stats() == grants) }

            // A file others could read is narrowed on load.
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            let third = tenant.auth(tokens: .file(path))
            #expect(third.isSignedIn)
            #expect(try Self.mode(path) == 0o600)

            await second.signOut()
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(!tenant.auth(tokens: .file(path)).isSignedIn)
            // Nothing but the file is left behind: every write renamed its temporary file.
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("nested").path)
                    == [])
            try await second.shutdown()
            try await third.shutdown()
        }
    }

    @Test(arguments: AuthServer.allCases)
    func aCorruptTokenFileIsAnErrorUntilTheNextSignIn(_ server: AuthServer) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gqlauth-\(UUID().uuidString).json")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: path))
        try await AuthTenant.with(server) { tenant in
            try await tenant.signedIn().shutdown()
            let auth = tenant.auth(tokens: .file(path))
            #expect(!auth.isSignedIn)
            await expectAuthError(.decoding) { _ = try await auth.accessToken() }
            try await auth.signIn(email: "ann@example.com", password: AuthTenant.password)
            #expect(try await tenant.apiStatus("Bearer " + auth.accessToken()) == 200)
            try await auth.shutdown()
        }
    }

    @Test func tokensNeverPrintTheirSecrets() {
        let tokens = GQLAuth.Tokens(
            accessToken: "at-SECRET", idToken: "id-SECRET", refreshToken: "rt-SECRET",
            expiresAt: Date(timeIntervalSince1970: 0))
        var dumped = ""
        dump(tokens, to: &dumped)
        for text in [tokens.description, tokens.debugDescription, "\(tokens)", String(reflecting: tokens), dumped] {
            #expect(!text.contains("SECRET"), "\(text)")
        }
        #expect(tokens.description.contains("1970-01-01T00:00:00.000Z"))
        let auth = GQLAuth(domain: "tenant.test", clientId: "client", clientSecret: "SECRET-client")
        var dumpedAuth = ""
        dump(auth, to: &dumpedAuth)
        for text in ["\(auth)", String(reflecting: auth), dumpedAuth] {
            #expect(!text.contains("SECRET"), "\(text)")
            #expect(text.contains("tenant.test"))
        }
    }

    @Test(arguments: AuthServer.allCases) func staticFormsUseTheSharedInstance(_ server: AuthServer) async throws {
        try await AuthTenant.with(server) { tenant in
            try await tenant.signedIn("static@example.com").shutdown()
            GQLAuth.setup(AuthTenant.domain, AuthTenant.clientId, nil, baseURL: tenant.url)
            let error: (any Error)? = await withCheckedContinuation { continuation in
                GQLAuth.signIn(email: "static@example.com", password: AuthTenant.password) {
                    continuation.resume(returning: $0)
                }
            }
            #expect(error == nil)
            #expect(GQLAuth.userId()?.hasPrefix("auth0|") == true)
            let refused: (any Error)? = await withCheckedContinuation { continuation in
                GQLAuth.checkPassword(password: "wrong password 7") { continuation.resume(returning: $0) }
            }
            #expect((refused as? GQLError)?.code == .wrongCredentials)
            let token: String? = await withCheckedContinuation { continuation in
                GQLAuth.accessToken { token, _ in continuation.resume(returning: token) }
            }
            #expect(try await tenant.apiStatus("Bearer " + (token ?? "")) == 200)
            let refresh = try #require(GQLAuth.shared?.refreshTokenForTests)
            let update: GQLAuth.PasswordUpdate? = await withCheckedContinuation { continuation in
                GQLAuth.updatePassword(password: "unused here") { outcome, _ in continuation.resume(returning: outcome)
                }
            }
            #expect(update == .emailSent)
            await withCheckedContinuation { continuation in GQLAuth.signOut { continuation.resume() } }
            #expect(GQLAuth.userId() == nil)
            #expect(try await !tenant.refreshes(refresh))
            if let revocations = try await tenant.count("revoke") { #expect(revocations == 1) }
            try await GQLAuth.shared?.shutdown()
        }
    }

    private static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
