import Foundation
import GQLCore
import GQLCrypto
import Testing

/// scrypt against RFC 7914's test vectors, and ES256 checked with P256PublicKey (the OneSignal emulator's identity
/// verification): a signature from P256PrivateKey verifies, an altered one or another key's does not.
@Suite struct ScryptAndES256Tests {
    @Test func scryptGivesRFC7914sVectors() throws {
        // RFC 7914 §12, the second and first vectors (the third and fourth take seconds).
        let nacl = try Scrypt.derive(
            Array("password".utf8), salt: Array("NaCl".utf8), cost: .init(n: 1024, r: 8, p: 16), length: 64)
        #expect(
            Bytes.hex(nacl)
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830da"
                + "c727afb94a83ee6d8360cbdfa2cc0640")
        let empty = try Scrypt.derive([], salt: [], cost: .init(n: 16, r: 1, p: 1), length: 64)
        #expect(
            Bytes.hex(empty)
                == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17"
                + "e8d3e0fb2e0d3628cf35e20c38d18906")
    }

    @Test func scryptRefusesCostsThatAreNotPowersOfTwoOrTooLarge() {
        for cost in [Scrypt.Cost(n: 1000, r: 8, p: 1), .init(n: 1, r: 8, p: 1), .init(n: 1 << 20, r: 64, p: 1)] {
            let error = #expect(throws: GQLError.self) { try Scrypt.derive([1], salt: [2], cost: cost) }
            #expect(error?.code == .invalidArgument)
        }
        #expect(Scrypt.salt().count == 16)
        #expect(Scrypt.salt() != Scrypt.salt())
    }

    @Test func es256TokensVerifyWithThePublicKeyOnly() throws {
        let key = try P256PrivateKey.generate()
        let publicKey = try P256PublicKey(pem: key.publicKeyPEM())
        let claims: GQLValues = ["iss": "app", "exp": .int(Int64(Date().timeIntervalSince1970) + 600)]
        let token = try JWTSigner.es256(claims, key: key)
        let verifier = JWTVerifier(issuer: "app")
        #expect(try verifier.verify(token, key: .p256(publicKey), now: Date()).claims["iss"] == "app")

        // Another key, an altered payload, and an RS256 token against the P-256 key are refused.
        let other = try JWTSigner.es256(claims, key: P256PrivateKey.generate())
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"iss":"app","exp":9999999999,"x":1}"#.utf8))
        let rsa = try JWTSigner.rs256(claims, key: RSAPrivateKey.generate())
        for forged in [other, parts.joined(separator: "."), rsa] {
            let error = #expect(throws: GQLError.self) {
                try verifier.verify(forged, key: .p256(publicKey), now: Date())
            }
            #expect(error?.code == .invalidToken)
        }
        #expect(throws: GQLError.self) { try P256PublicKey(pem: RSAPrivateKey.generate().pem()) }
    }
}
