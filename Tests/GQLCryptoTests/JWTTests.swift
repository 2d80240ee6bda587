import Foundation
import GQLCore
import GQLCrypto
import Testing

/// The JWT layer: RFC 7515's examples, then every way a token must be refused.
@Suite struct JWTTests {
    /// A moment before the RFC examples expire (their exp is 2011-03-22T18:43:00Z).
    static let beforeExpiry = Date(timeIntervalSince1970: TimeInterval(RFC7515.expiry - 600))

    static func rfcHMACKey() throws -> JWTKey {
        .hmac(try HMACSHA256.Key(try #require(Base64URL.decode(RFC7515.hs256Key))))
    }

    static func rfcRSAKey() throws -> RSAPublicKey {
        try RSAPublicKey(
            modulus: try #require(Base64URL.decode(RFC7515.rs256Modulus)),
            exponent: try #require(Base64URL.decode(RFC7515.rs256Exponent)))
    }

    @Test func rfc7515HS256() throws {
        let jwt = try JWTVerifier().verify(RFC7515.hs256Token, key: try Self.rfcHMACKey(), now: Self.beforeExpiry)
        #expect(jwt.algorithm == "HS256")
        #expect(jwt.header["typ"] == "JWT")
        #expect(jwt.claims["iss"] == "joe")
        #expect(jwt.claims["exp"] == .int(Int64(RFC7515.expiry)))
        #expect(jwt.claims["http://example.com/is_root"] == true)
    }

    @Test func rfc7515RS256VerifiesWithTheJWKAndSignsTheSameBytesFromPEM() throws {
        let key = try Self.rfcRSAKey()
        #expect(key.byteCount == 256)
        let jwt = try JWTVerifier().verify(RFC7515.rs256Token, key: .rsa(key), now: Self.beforeExpiry)
        #expect(jwt.claims["iss"] == "joe")
        // PKCS#1 v1.5 is deterministic: the PEM private key reproduces the RFC's signature byte for byte.
        let privateKey = try RSAPrivateKey(pem: RFC7515.rs256PrivateKeyPEM)
        let signature = try privateKey.sign(Array(RFC7515.rs256SigningInput.utf8))
        #expect(Base64URL.encode(signature) == RFC7515.rs256Signature)
        #expect(try privateKey.publicKey.components.modulus == key.components.modulus)
        #expect(key.components.exponent == [1, 0, 1])
    }

    @Test func base64URLIsCanonicalAndUnpadded() {
        #expect(Base64URL.encode(Array("hi?".utf8)) == "aGk_")
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.decode("aGk_") == Array("hi?".utf8))
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        #expect(Base64URL.decode("aGk_=") == nil)  // padding
        #expect(Base64URL.decode("aGk/") == nil)  // standard alphabet
        #expect(Base64URL.decode("a") == nil)  // one character over
        #expect(Base64URL.decode("-_9") == nil)  // unused bits set
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func expiredAndNotYetValidTokensAreRefusedWithLeeway() throws {
        let key = try JWTKey.secret("s3cret")
        let token = try JWTSigner.hs256(["exp": 1000, "nbf": 500, "iat": 500], secret: "s3cret")
        let verifier = JWTVerifier(leeway: 30)
        try verifier.verify(token, key: key, now: Date(timeIntervalSince1970: 1029))  // within leeway
        try verifier.verify(token, key: key, now: Date(timeIntervalSince1970: 471))
        expectRefusal("expired at 1000 (now 1030, leeway 30 s)") {
            try verifier.verify(token, key: key, now: Date(timeIntervalSince1970: 1030))
        }
        expectRefusal("not valid before 500") {
            try verifier.verify(token, key: key, now: Date(timeIntervalSince1970: 469))
        }
        let noExpiry = try JWTSigner.hs256(["sub": "x"], secret: "s3cret")
        expectRefusal("no expiry (exp)") { try verifier.verify(noExpiry, key: key, now: Date()) }
        try JWTVerifier(requiresExpiry: false).verify(noExpiry, key: key, now: Date())
        let textExpiry = try JWTSigner.hs256(["exp": "tomorrow"], secret: "s3cret")
        expectRefusal("\"exp\" is not a number") { try verifier.verify(textExpiry, key: key, now: Date()) }
        let future = try JWTSigner.hs256(["exp": 5000, "iat": 2000], secret: "s3cret")
        expectRefusal("issued in the future") {
            try verifier.verify(future, key: key, now: Date(timeIntervalSince1970: 1000))
        }
    }

    @Test func issuerAndAudienceAreChecked() throws {
        let key = try JWTKey.secret("s3cret")
        let now = Date(timeIntervalSince1970: 100)
        let verifier = JWTVerifier(issuer: "https://tenant.example/", audience: "client-1")
        func token(_ claims: GQLValues) throws -> String {
            try JWTSigner.hs256(claims.merging(["exp": 200]) { a, _ in a }, secret: "s3cret")
        }
        try verifier.verify(try token(["iss": "https://tenant.example/", "aud": "client-1"]), key: key, now: now)
        try verifier.verify(
            try token(["iss": "https://tenant.example/", "aud": ["api", "client-1"]]), key: key, now: now)
        expectRefusal("another audience") {
            try verifier.verify(try token(["iss": "https://tenant.example/", "aud": "client-2"]), key: key, now: now)
        }
        expectRefusal("another audience") {
            try verifier.verify(try token(["iss": "https://tenant.example/", "aud": ["api"]]), key: key, now: now)
        }
        expectRefusal("no audience") {
            try verifier.verify(try token(["iss": "https://tenant.example/"]), key: key, now: now)
        }
        expectRefusal("issuer is not https://tenant.example/") {
            try verifier.verify(try token(["iss": "https://evil.example/", "aud": "client-1"]), key: key, now: now)
        }
        expectRefusal("names no issuer") { try verifier.verify(try token(["aud": "client-1"]), key: key, now: now) }
        // azp names the client: checked for ID tokens (authorizedParty), not for access tokens, whose aud is the API.
        let accessToken = try token(["iss": "https://tenant.example/", "aud": ["api", "client-1"], "azp": "client-2"])
        try verifier.verify(accessToken, key: key, now: now)
        var idTokens = verifier
        idTokens.authorizedParty = "client-1"
        expectRefusal("authorized party (azp)") { try idTokens.verify(accessToken, key: key, now: now) }
    }

    @Test func forgedSignaturesAndTamperedPayloadsAreRefused() throws {
        let key = try Self.rfcHMACKey()
        var parts = RFC7515.hs256Token.split(separator: ".").map(String.init)
        let original = parts[1]
        parts[1] = Base64URL.encode(Array(#"{"iss":"joe","exp":1300819380,"http://example.com/is_root":false}"#.utf8))
        expectRefusal("signature does not match") {
            try JWTVerifier().verify(parts.joined(separator: "."), key: key, now: Self.beforeExpiry)
        }
        parts[1] = original
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[0] ^= 1
        parts[2] = Base64URL.encode(signature)
        expectRefusal("signature does not match") {
            try JWTVerifier().verify(parts.joined(separator: "."), key: key, now: Self.beforeExpiry)
        }
        // The right claims under another secret.
        let forged = try JWTSigner.hs256(["exp": 1_300_819_380], secret: "guess")
        expectRefusal("signature does not match") { try JWTVerifier().verify(forged, key: key, now: Self.beforeExpiry) }
        // RS256: a token signed by another RSA key.
        let other = try RSAPrivateKey.generate()
        let stranger = try JWTSigner.rs256(["exp": 1_300_819_380, "iss": "joe"], key: other)
        expectRefusal("signature does not match") {
            try JWTVerifier().verify(stranger, key: .rsa(try Self.rfcRSAKey()), now: Self.beforeExpiry)
        }
        try JWTVerifier().verify(stranger, key: .rsa(try other.publicKey), now: Self.beforeExpiry)
    }

    @Test func algNoneAndAlgorithmConfusionAreRefused() throws {
        let rsa = try Self.rfcRSAKey()
        let claims: GQLValues = ["iss": "joe", "exp": 1_300_819_380]
        let unsigned = try JWTSigner.sign(header: ["alg": "none"], claims: claims) { _ in [] }
        expectRefusal("unsigned (alg \"none\")") {
            try JWTVerifier().verify(unsigned, key: .rsa(rsa), now: Self.beforeExpiry)
        }
        expectRefusal("unsigned (alg \"none\")") {
            try JWTVerifier().verify(unsigned, key: try JWTKey.secret(""), now: Self.beforeExpiry)
        }
        // The classic confusion: HS256 keyed with the RSA public key's own bytes (its PEM or modulus), which an
        // attacker knows. A key pinned to RS256 never runs HMAC.
        let confused = try JWTSigner.sign(header: ["alg": "HS256"], claims: claims) {
            HMACSHA256.authenticate($0, key: rsa.components.modulus)
        }
        expectRefusal("signed with HS256, the key checks RS256 only") {
            try JWTVerifier().verify(confused, key: .rsa(rsa), now: Self.beforeExpiry)
        }
        expectRefusal("signed with RS256, the key checks HS256 only") {
            try JWTVerifier().verify(RFC7515.rs256Token, key: try Self.rfcHMACKey(), now: Self.beforeExpiry)
        }
        let critical = try JWTSigner.sign(header: ["alg": "HS256", "crit": ["b64"], "b64": false], claims: claims) {
            _ in []
        }
        expectRefusal("critical (b64)") { _ = try JWT(compact: critical) }
    }

    @Test(arguments: [
        ("", "the token is empty"),
        ("a.b", "2 dot-separated parts"),
        ("a.b.c.d.e", "encrypted (JWE)"),
        ("e30.e30.", "no \"alg\" string"),
        ("!!.e30.", "header is not base64url"),
        (".e30.", "header is empty"),
        ("bm90IGpzb24.e30.", "header is not JSON"),
        ("W10.e30.", "header is JSON but not an object"),
        ("eyJhbGciOiJIUzI1NiJ9.W10.", "payload is JSON but not an object"),
        ("eyJhbGciOiJIUzI1NiJ9.e30.a", "signature is not base64url"),
        ("eyJhbGciOiJIUzI1NiIsImtpZCI6MX0.e30.", "\"kid\" is not a string"),
    ])
    func malformedTokensSayWhatIsWrong(token: String, reason: String) {
        expectRefusal(reason) { _ = try JWT(compact: token) }
    }

    @Test func oversizedTokensAreRefusedBeforeParsing() {
        expectRefusal("at most 65536") { _ = try JWT(compact: String(repeating: "a", count: 70_000)) }
    }

    @Test func jwksPicksKeysByKidAndSkipsOthers() throws {
        let first = try RSAPrivateKey.generate()
        let second = try RSAPrivateKey.generate()
        let set = JWKSet(keys: [.init(id: "k1", key: try first.publicKey), .init(id: "k2", key: try second.publicKey)])
        var document = try GQLValue(json: try set.json())
        // Keys the toolkit cannot use are skipped: an EC key, an encryption key.
        if case .object(var object) = document, case .array(var keys)? = object["keys"] {
            let ec: GQLValue = ["kty": "EC", "kid": "ec", "crv": "P-256", "x": "AA", "y": "AA"]
            let encryption: GQLValue = ["kty": "RSA", "kid": "enc", "use": "enc", "n": "AA", "e": "AQAB"]
            keys += [ec, encryption]
            object["keys"] = .array(keys)
            document = .object(object)
        }
        let parsed = try JWKSet(json: try document.jsonData())
        #expect(parsed.keys.map { $0.id } == ["k1", "k2"])
        let token = try JWTSigner.rs256(["exp": 200], key: second, keyId: "k2")
        let jwt = try JWTVerifier().verify(token, keys: parsed, now: Date(timeIntervalSince1970: 100))
        #expect(jwt.keyId == "k2")
        let unknown = try JWTSigner.rs256(["exp": 200], key: second, keyId: "k3")
        expectRefusal("no key in the JWKS has the token's kid") {
            try JWTVerifier().verify(unknown, keys: parsed, now: Date(timeIntervalSince1970: 100))
        }
        let anonymous = try JWTSigner.rs256(["exp": 200], key: second)
        expectRefusal("names no key (kid) and the JWKS holds 2 keys") {
            try JWTVerifier().verify(anonymous, keys: parsed, now: Date(timeIntervalSince1970: 100))
        }
        // Signed by k2's key but claiming to be k1: the named key decides.
        let misnamed = try JWTSigner.rs256(["exp": 200], key: second, keyId: "k1")
        expectRefusal("signature does not match") {
            try JWTVerifier().verify(misnamed, keys: parsed, now: Date(timeIntervalSince1970: 100))
        }
    }

    @Test func malformedKeysAreErrors() throws {
        #expect(throws: GQLError.self) {
            try JWKSet(json: Data(#"{"keys": [{"kty": "RSA", "kid": "a", "n": "?", "e": "AQAB"}]}"#.utf8))
        }
        #expect(throws: GQLError.self) { try JWKSet(json: Data(#"{"nokeys": []}"#.utf8)) }
        // RS256 needs 2,048 bits at least: RFC 7518 §3.3.
        let shortModulus = [UInt8](repeating: 0xc5, count: 128)
        let error = #expect(throws: GQLError.self) { try RSAPublicKey(modulus: shortModulus, exponent: [1, 0, 1]) }
        #expect(error?.message.contains("1024 bits is too short") == true)
        #expect(throws: GQLError.self) {
            try RSAPublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
        }
        #expect(throws: GQLError.self) { try RSAPrivateKey(pem: "not a key") }
        let pem = try RSAPrivateKey.generate().pem()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        _ = try RSAPrivateKey(pem: pem)
    }

    private func expectRefusal(
        _ reason: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        let error = #expect(throws: GQLError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .invalidToken, sourceLocation: sourceLocation)
        #expect(
            error?.message.contains(reason) == true, "\(error?.message ?? "no error")", sourceLocation: sourceLocation)
    }
}
