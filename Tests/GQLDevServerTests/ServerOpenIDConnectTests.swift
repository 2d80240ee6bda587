import Foundation
import GQLCore
import GQLCrypto
import Testing

@testable import GQLDevServer

/// The dev server's OpenID Connect mode (AppSync's `OPENID_CONNECT`): JWTs checked with a JSON Web Key Set (RS256)
/// or a shared secret (HS256) at the injected clock, over HTTP and the WebSocket protocols.
@Suite("GQLDevServer OpenID Connect", .timeLimit(.minutes(1)))
struct ServerOpenIDConnectTests {
    static let issuer = "https://issuer.example.com/"
    static let audience = "client-1"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Claims valid for `lifetime` seconds from `start`.
    static func claims(audience: String = audience, lifetime: Int64 = 60) -> GQLValues {
        let now = Int64(start.timeIntervalSince1970)
        return [
            "iss": .string(issuer), "aud": .string(audience), "sub": "user-1", "iat": .int(now),
            "exp": .int(now + lifetime),
        ]
    }

    /// A server configuration checking RS256 tokens against `keys`, at a clock the test moves.
    static func configuration(jwks: String, clock: GQLLocked<Date>) -> GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.openIDConnect = .init(keys: .jwks(Data(jwks.utf8)), issuer: issuer, audience: audience)
        configuration.clock = { clock.withLock { $0 } }
        return configuration
    }

    @Test func rs256TokensFromAKeySetOverHTTP() async throws {
        let key = try RSAPrivateKey.generate()
        let stranger = try RSAPrivateKey.generate()
        let jwks = try JWKSet(keys: [.init(id: "k1", key: key.publicKey)]).json()
        let clock = GQLLocked(Self.start)
        let good = try JWTSigner.rs256(Self.claims(), key: key, keyId: "k1")
        let cases: [(String, String?, Int, String?)] = [
            ("good", "Bearer \(good)", 200, nil),
            ("bare token, as AppSync takes it", good, 200, nil),
            (
                "another key", "Bearer " + (try JWTSigner.rs256(Self.claims(), key: stranger, keyId: "k1")), 401,
                "signature"
            ),
            ("unknown kid", "Bearer " + (try JWTSigner.rs256(Self.claims(), key: key, keyId: "k9")), 401, "kid"),
            ("HS256 with the set", "Bearer " + (try JWTSigner.hs256(Self.claims(), secret: "x")), 401, "HS256"),
            (
                "wrong audience",
                "Bearer " + (try JWTSigner.rs256(Self.claims(audience: "other"), key: key, keyId: "k1")), 401,
                "audience"
            ),
            ("none", nil, 401, "no Authorization token"),
        ]
        try await withDevServer(Self.configuration(jwks: jwks, clock: clock)) { _, endpoints in
            for (name, authorization, status, reason) in cases {
                let outcome = try await post(
                    endpoints.http, ["query": .string(ObjectsAPI.list)],
                    headers: authorization.map { ["Authorization": $0] } ?? [:])
                #expect(outcome.status == status, "\(name)")
                guard let reason else { continue }
                let message = outcome.json?["errors"]?[0]?["message"]?.stringValue ?? ""
                #expect(message.contains(reason), "\(name): \(message)")
                #expect(outcome.json?["errors"]?[0]?["extensions"]?["code"] == "UNAUTHENTICATED")
                #expect(outcome.headers["www-authenticate"] == "Bearer")
            }
            clock.withLock { $0 += 61 }
            let expired = try await post(
                endpoints.http, ["query": .string(ObjectsAPI.list)], headers: ["Authorization": "Bearer \(good)"])
            #expect(expired.status == 401)
            #expect(expired.json?["errors"]?[0]?["message"]?.stringValue?.contains("expired") == true)
        }
    }

    @Test func transportWSRefusesWith4401AndClosesWhenTheTokenExpires() async throws {
        let key = try RSAPrivateKey.generate()
        let jwks = try JWKSet(keys: [.init(id: "k1", key: key.publicKey)]).json()
        let clock = GQLLocked(Self.start)
        let good = try JWTSigner.rs256(Self.claims(), key: key, keyId: "k1")
        let forged = try JWTSigner.rs256(Self.claims(), key: try RSAPrivateKey.generate(), keyId: "k1")
        try await withDevServer(Self.configuration(jwks: jwks, clock: clock)) { _, endpoints in
            let refused = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init", "payload": ["Authorization": .string(forged)]])
                return try await socket.drain()
            }
            #expect(refused.closeCode == 4401)
            #expect(refused.closeReason?.contains("signature") == true)

            let expired = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send([
                    "type": "connection_init", "payload": ["Authorization": .string("Bearer \(good)")],
                ])
                var seen = [try required(try await socket.receive())]
                try await socket.send(["type": "subscribe", "id": "1", "payload": ["query": .string(ObjectsAPI.list)]])
                seen.append(try required(try await socket.receive()?["type"]))
                _ = try await socket.receive()  // complete
                clock.withLock { $0 += 60 }
                try await socket.send(["type": "subscribe", "id": "2", "payload": ["query": .string(ObjectsAPI.list)]])
                return seen + (try await socket.drain())
            }
            #expect(expired.result?.first == ["type": "connection_ack"])
            #expect(expired.result?[1] == "next")
            #expect(expired.closeCode == 4401)
            #expect(expired.closeReason == "Unauthorized: the token expired")
        }
    }

    @Test func anAPIKeyStillServesBesideTokens() async throws {
        var configuration = GQLDevServer.Configuration()
        configuration.apiKey = "da2-key"
        configuration.openIDConnect = .init(keys: .sharedSecret("s3cret"), audience: Self.audience)
        configuration.clock = { Self.start }
        try await withDevServer(configuration) { _, endpoints in
            let request: GQLValue = ["query": .string(ObjectsAPI.list)]
            #expect(try await post(endpoints.http, request, headers: ["x-api-key": "da2-key"]).status == 200)
            let token = try JWTSigner.hs256(Self.claims(), secret: "s3cret")
            #expect(
                try await post(endpoints.http, request, headers: ["authorization": "Bearer \(token)"]).status == 200)
            let neither = try await post(endpoints.http, request, headers: ["x-api-key": "da2-wrong"])
            #expect(neither.status == 401)
        }
    }

    @Test func unusableKeysAreRefusedAtStart() throws {
        for keys: GQLDevServer.OpenIDConnect.Keys in [
            .sharedSecret(""), .jwks(Data("not json".utf8)), .jwks(Data(#"{"keys":[]}"#.utf8)),
        ] {
            var configuration = GQLDevServer.Configuration()
            configuration.openIDConnect = .init(keys: keys)
            let error = #expect(throws: GQLError.self) { try GQLDevServer(configuration: configuration) }
            #expect(error?.code == .invalidArgument)
        }
    }
}
