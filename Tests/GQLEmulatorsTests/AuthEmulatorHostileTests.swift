import Foundation
import GQLCore
import GQLServices
import GQLTestSupport
import Testing

@testable import GQLEmulators

/// The Auth0 emulator under hostile input: malformed bodies, huge headers, slow and oversized bodies, wrong client
/// credentials, and password guessing; each gets Auth0's error shape, nothing crashes.
@Suite("Auth0 emulator, hostile input", .timeLimit(.minutes(1)))
struct AuthEmulatorHostileTests {
    @Test func malformedBodiesGetAuth0sErrorShapes() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let port = fixture.started.port
            let signup = "{\"email\": \"a@b.c\", \"password\": "
            let bad = try RawConnection(
                port: port,
                sending: "POST /dbconnections/signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(signup.utf8.count)\r\n\r\n\(signup)")
            let reply = await bad.readAnswers(1)
            #expect(reply.first?.status == 400)
            let body = try GQLValue(json: Data((reply.first?.body ?? "").utf8))
            #expect(body["code"] == "invalid_body")
            #expect(body["statusCode"] == 400)

            let form = "grant_type=password&username=%ZZ"
            let token = try RawConnection(
                port: port,
                sending: "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                    + "Content-Length: \(form.utf8.count)\r\n\r\n\(form)")
            let tokenReply = await token.readAnswers(1)
            #expect(tokenReply.first?.status == 400)
            #expect(tokenReply.first?.body.contains("\"error\":\"invalid_request\"") == true)

            let unknown = await fixture.refusal { _ = try await fixture.rest.invoke(.get, "nowhere") }
            #expect(unknown.status == 404)
            let grant = await fixture.refusal { _ = try await fixture.token(["grant_type": "implicit"]) }
            #expect(grant.status == 403 && grant.code == "unauthorized_client")
        }
    }

    @Test func hugeHeadersSlowAndLargeBodiesAreRefused() async throws {
        try await AuthEmulatorFixture.with(configure: {
            $0.limits.maxHeaderBytes = 4096
            $0.limits.bodyTimeout = .milliseconds(300)
        }) { fixture in
            let port = fixture.started.port
            let big = String(repeating: "a", count: 8192)
            let huge = await
                (try RawConnection(
                    port: port, sending: "GET /userinfo HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n"))
                .readUntilClosed()
            #expect(huge.status == 431)
            #expect(huge.text.contains("invalid_request"))

            // Half a body, then nothing: refused once the body timeout passes (the bound is the outcome's
            // deadline, the test decides by the 408).
            let slow = try RawConnection(
                port: port,
                sending: "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{\"grant_type\":")
            let slowReply = await slow.readAnswers(1)
            #expect(slowReply.first?.status == 408)

            let large = await fixture.refusal {
                _ = try await fixture.rest.invoke(
                    .post, "dbconnections/signup", json: ["email": .string(String(repeating: "x", count: 70_000))])
            }
            #expect(large.status == 413)
        }
    }

    @Test func wrongClientCredentialsAndPasswordGuessingAreRefused() async throws {
        try await AuthEmulatorFixture.with(configure: { $0.maxFailedAttempts = 3 }) { fixture in
            let auth = try await fixture.signedIn(secret: true)
            let wrongSecret = await fixture.refusal {
                _ = try await fixture.token([
                    "grant_type": "password", "username": "ann@example.com", "password": AuthEmulatorFixture.password,
                    "client_secret": "not the secret",
                ])
            }
            #expect(wrongSecret.status == 401 && wrongSecret.code == "access_denied")
            let wrongClient = await fixture.refusal {
                _ = try await fixture.token(["grant_type": "password", "client_id": "someone-else"])
            }
            #expect(wrongClient.status == 401)
            let noSecret = await fixture.refusal {
                _ = try await fixture.token([
                    "grant_type": "client_credentials", "audience": "https://\(fixture.emulator.domain)/api/v2/",
                ])
            }
            #expect(noSecret.status == 401)
            let signup = await fixture.refusal {
                _ = try await fixture.rest.invoke(
                    .post, "dbconnections/signup",
                    json: ["client_id": "other", "email": "x@y.z", "password": "long enough", "connection": "c"])
            }
            #expect(signup.status == 400)

            // Three wrong passwords block the user, the right one included, until the password changes.
            for _ in 0..<3 {
                await expectError(.wrongCredentials) {
                    try await fixture.auth().signIn(email: "ann@example.com", password: "guess")
                }
            }
            await expectError(.tooManyAttempts) {
                try await fixture.auth().signIn(email: "ann@example.com", password: AuthEmulatorFixture.password)
            }
            #expect(try await auth.updatePassword(password: "after the block") == .changed)
            try await fixture.auth().signIn(email: "ann@example.com", password: "after the block")
            try await auth.shutdown()
        }
    }
    @Test func aUserCannotGetAManagementTokenOrResetAnotherUsersPassword() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let victim = try await fixture.rest.invoke(
                .post, "dbconnections/signup",
                json: [
                    "client_id": .string(fixture.emulator.configuration.clientId), "email": "victim@example.com",
                    "password": .string(AuthEmulatorFixture.password),
                    "connection": .string(fixture.emulator.configuration.connection),
                ])
            let victimId = try #require(victim["_id"]?.stringValue)
            let eve = try await fixture.signedIn("eve@example.com")
            let management = "https://\(fixture.emulator.domain)/api/v2/"
            let signIn = [
                "grant_type": "password", "username": "eve@example.com", "password": AuthEmulatorFixture.password,
            ]

            // A user's password grant for the Management API is refused as Auth0 refuses it.
            let forManagement = await fixture.refusal {
                _ = try await fixture.token(
                    signIn.merging(["audience": management, "scope": "openid update:users"]) { $1 })
            }
            #expect(forManagement.status == 403 && forManagement.code == "access_denied")

            // Scopes outside OpenID Connect's (and the configured API's) are dropped.
            let answer = try await fixture.token(signIn.merging(["scope": "openid update:users read:users"]) { $1 })
            #expect(answer["scope"]?.stringValue == "openid")
            let token = try #require(answer["access_token"]?.stringValue)

            // The user's token does not reach the Management API; the victim keeps the password.
            let reset = await fixture.refusal {
                _ = try await fixture.rest.invoke(
                    .patch, "api/v2/users/auth0%7C\(victimId)", json: ["password": "owned by eve 1"],
                    headers: ["Authorization": "Bearer \(token)"])
            }
            #expect(reset.status == 401 || reset.status == 403)
            try await fixture.auth().signIn(email: "victim@example.com", password: AuthEmulatorFixture.password)
            try await eve.shutdown()
        }
    }

    @Test func theManagementAPIBlocksAndUnblocksAndRefusesBadBodies() async throws {
        try await AuthEmulatorFixture.with { fixture in
            let configuration = fixture.emulator.configuration
            let ann = try await fixture.signedIn()
            let annId = try #require(ann.userId())
            let grant = try await fixture.token([
                "grant_type": "client_credentials", "client_secret": configuration.clientSecret,
                "audience": "https://\(fixture.emulator.domain)/api/v2/",
            ])
            let headers = ["Authorization": "Bearer " + (grant["access_token"]?.stringValue ?? "")]
            let path = "api/v2/users/" + (annId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? annId)
            func patch(_ body: GQLValue) async -> (status: Int?, code: String?) {
                await fixture.refusal { _ = try await fixture.rest.invoke(.patch, path, json: body, headers: headers) }
            }
            for body: GQLValue in [[:], ["blocked": "yes"], ["password": 42], ["password": ""]] {
                let refused = await patch(body)
                #expect(refused.status == 400, "\(body): \(refused)")
            }
            let nobody = await fixture.refusal {
                _ = try await fixture.rest.invoke(
                    .patch, "api/v2/users/auth0%7Cnobody", json: ["blocked": true], headers: headers)
            }
            #expect(nobody.status == 404)

            // Blocked: the right password is refused as Auth0 refuses it, the session's refresh token stops
            // working; unblocked: both work again.
            let refresh = try #require(
                try await fixture.token([
                    "grant_type": "password", "username": "ann@example.com", "password": AuthEmulatorFixture.password,
                    "scope": "openid offline_access",
                ])["refresh_token"]?.stringValue)
            let blocked = try await fixture.rest.invoke(.patch, path, json: ["blocked": true], headers: headers)
            #expect(blocked["blocked"] == true && blocked["user_id"]?.stringValue == annId)
            await expectError(.blocked) {
                try await fixture.auth().signIn(email: "ann@example.com", password: AuthEmulatorFixture.password)
            }
            let wrong = await fixture.refusal {
                _ = try await fixture.token([
                    "grant_type": "password", "username": "ann@example.com", "password": "not the password",
                ])
            }
            #expect(wrong.status == 403 && wrong.code == "invalid_grant", "a wrong password tells nothing more")
            let stale = await fixture.refusal {
                _ = try await fixture.token(["grant_type": "refresh_token", "refresh_token": refresh])
            }
            #expect(stale.status == 403 && stale.code == "invalid_grant")
            let unblocked = try await fixture.rest.invoke(.patch, path, json: ["blocked": false], headers: headers)
            #expect(unblocked["blocked"] == false)
            _ = try await fixture.token(["grant_type": "refresh_token", "refresh_token": refresh])
            try await fixture.auth().signIn(email: "ann@example.com", password: AuthEmulatorFixture.password)
            try await ann.shutdown()
        }
    }
}
