import Foundation
import GQLCore
import GQLCrypto
import Testing

/// `gql-cli serve --jwt-secret / --jwks / --issuer / --audience`: the dev server's OpenID Connect mode from the
/// command line.
@Suite("gql-cli serve with OpenID Connect tokens")
struct ServeTokenTests {
    static let list = "{ listObjects { items { objectId } } }"

    @Test func flagsAreChecked() async throws {
        let both = try await CLIProcess.fail(["serve", "--jwt-secret", "s", "--jwks", "keys.json"], status: 64)
        #expect(both.contains("not both"), "stderr: \(both)")
        let alone = try await CLIProcess.fail(["serve", "--audience", "app"], status: 64)
        #expect(alone.contains("--audience needs --jwt-secret or --jwks"), "stderr: \(alone)")
        let missing = try await CLIProcess.fail(["serve", "--jwks", "/nonexistent/jwks.json"], status: 64)
        #expect(missing.contains("no JSON Web Key Set file"), "stderr: \(missing)")
    }

    @Test func anHS256TokenIsRequiredAndChecked() async throws {
        let server = try await ServeProcess.start([
            "--port", "0", "--jwt-secret", "cli-secret", "--issuer", "https://issuer.test/", "--audience", "app",
        ])
        let now = Int64(Date().timeIntervalSince1970)
        var claims: GQLValues = [
            "iss": "https://issuer.test/", "aud": "app", "sub": "u1", "iat": .int(now), "exp": .int(now + 600),
        ]
        let token = try JWTSigner.hs256(claims, secret: "cli-secret")
        let answer = try await CLIProcess.succeed([
            "query", "--url", server.http, "--header", "authorization: Bearer \(token)", Self.list,
        ])
        #expect(try GQLValue(json: answer)["data"]?["listObjects"]?["items"] == [])

        let none = try await CLIProcess.fail(["query", "--url", server.http, Self.list])
        #expect(none.contains("refused the credentials (HTTP 401)"), "stderr: \(none)")

        claims["exp"] = .int(now - 10)
        let expired = try JWTSigner.hs256(claims, secret: "cli-secret")
        let refused = try await CLIProcess.fail([
            "query", "--url", server.http, "--header", "authorization: Bearer \(expired)", Self.list,
        ])
        #expect(refused.contains("refused the credentials (HTTP 401)"), "stderr: \(refused)")
        #expect(
            refused.contains("expired") && refused.contains("--auth"), "the server's reason and the way out: \(refused)"
        )
        #expect(!refused.contains(expired))
    }

    @Test func anRS256TokenIsCheckedAgainstAKeySetFile() async throws {
        let scratch = try TemporaryDirectory()
        let key = try RSAPrivateKey.generate()
        try JWKSet(keys: [.init(id: "cli-k1", key: key.publicKey)]).json()
            .write(toFile: scratch.path("jwks.json"), atomically: true, encoding: .utf8)
        let server = try await ServeProcess.start(["--port", "0", "--jwks", scratch.path("jwks.json")])
        let now = Int64(Date().timeIntervalSince1970)
        let claims: GQLValues = ["sub": "u1", "iat": .int(now), "exp": .int(now + 600)]
        let token = try JWTSigner.rs256(claims, key: key, keyId: "cli-k1")
        let answer = try await CLIProcess.succeed([
            "query", "--url", server.http, "--header", "authorization: \(token)", Self.list,
        ])
        #expect(try GQLValue(json: answer)["data"]?["listObjects"]?["items"] == [])
        let stranger = try JWTSigner.rs256(claims, key: try RSAPrivateKey.generate(), keyId: "cli-k1")
        let refused = try await CLIProcess.fail([
            "query", "--url", server.http, "--header", "authorization: Bearer \(stranger)", Self.list,
        ])
        #expect(refused.contains("refused the credentials (HTTP 401)"), "stderr: \(refused)")

        try "not a key set".write(toFile: scratch.path("bad.json"), atomically: true, encoding: .utf8)
        let unusable = try await CLIProcess.fail(["serve", "--port", "0", "--jwks", scratch.path("bad.json")])
        #expect(unusable.contains("JSON Web Key Set"), "stderr: \(unusable)")
    }
}
