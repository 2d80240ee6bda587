import Foundation
import GQLCore
import GQLCrypto
import Testing

/// ES256 signing with P256PrivateKey: the key's PEM forms, the signature's JWS shape, and the keys it refuses.
/// (That the signatures verify is shown by PyJWT in GQLServicesTests' PushTests, against OneSignal's stand-in.)
@Suite struct P256Tests {
    @Test func signaturesAreRAndSOf32BytesAndTheKeyRoundTripsThroughPEM() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("header.payload".utf8)
        let first = try key.sign(message)
        let second = try key.sign(message)
        #expect(first.count == 64 && second.count == 64)
        #expect(first != second)  // ECDSA draws a fresh nonce for each signature
        let again = try P256PrivateKey(pem: try key.pem())
        #expect(try again.publicKeyPEM() == (try key.publicKeyPEM()))
        #expect(try key.publicKeyPEM().hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let token = try JWTSigner.es256(["iss": "app"], key: key)
        let header = try GQLValue(json: Data(try #require(Base64URL.decode(token.split(separator: ".")[0]))))
        #expect(header["alg"] == "ES256")
    }

    @Test func aKeyThatIsNotP256IsRefusedWithoutQuotingIt() throws {
        let rsa = try RSAPrivateKey.generate().pem()
        for pem in [rsa, "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n", ""] {
            let error = #expect(throws: GQLError.self) { try P256PrivateKey(pem: pem) }
            #expect(error?.code == .crypto)
            #expect(error.map { !$0.message.contains("c2VjcmV0") } == true)
        }
    }

    /// Encrypted P-256 keys (passphrase "x"), PKCS#8 and the traditional Proc-Type form, made by `openssl genpkey
    /// -aes256` and `openssl ec -aes256`. Without a passphrase callback libcrypto would ask on the terminal.
    static let encryptedKeys = [
        """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAh0muX1uW6y5gICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEL7sUGpbiMgwpO38iYsh7TwEgZDD
        8OvIYO/DwgUb+dJRC7bHAzlJuxzJrUOZrxdq9lRCLou4rT8+f4lgrZbe6JrFcCMk
        RYtu9ULVGbftmnwgaxPqtFSitundty//arOiOsBgUTLJhlQZD7SaY3j7yOvV9ehB
        yJQI8Mk2da7n8WK8zyyDNXv70nSVfQd/Dvo5/B21MtLdIdg8slLdWFGKMmcl5ZQ=
        -----END ENCRYPTED PRIVATE KEY-----
        """,
        """
        -----BEGIN EC PRIVATE KEY-----
        Proc-Type: 4,ENCRYPTED
        DEK-Info: AES-256-CBC,D6010EBED1B06B8DEA926212591D292C

        9lApZ232Nvhc37M3iAp5LZf4wqSu+LfGWRQKGmOBAabPVPROLSh5ougdc1aZUipK
        2XVswk1La5en78xxsVUARoLVq4DctEpxJ8NMwtzUAb2HawxyhDeE8tr0UrLdcolp
        4v2N3KZBkoHvCR9YYtLfPWsPe2YQbNBW6rw/KBzVgT8=
        -----END EC PRIVATE KEY-----
        """,
    ]

    @Test func anEncryptedKeyIsRefusedAtOnceAndSaysSo() throws {
        for pem in Self.encryptedKeys {
            let error = #expect(throws: GQLError.self) { try P256PrivateKey(pem: pem) }
            #expect(error?.code == .crypto)
            #expect(error?.message.contains("encrypted") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(error.map { !$0.message.contains("MIHs") && !$0.message.contains("9lAp") } == true)
        }
    }

    @Test func aShortDERHalfIsPaddedToItsWidth() throws {
        // SEQUENCE { INTEGER 1, INTEGER 0x00FF } : R and S far shorter than 32 bytes.
        let raw = try P256PrivateKey.raw(fromDER: [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0xFF])
        #expect(raw.count == 64)
        #expect(raw[31] == 1 && raw[63] == 0xFF && raw[0..<31].allSatisfy { $0 == 0 })
        #expect(throws: GQLError.self) { try P256PrivateKey.raw(fromDER: [0x30, 0x00]) }
    }
}
