import CCrypto
import GQLCore

/// An RSA private key in OpenSSL's libcrypto that makes RS256 signatures: for the dev server, test peers and
/// tests, which mint tokens; an app only ever verifies.
///
/// ```swift
/// let key = try RSAPrivateKey(pem: pemText)          // "BEGIN PRIVATE KEY" or "BEGIN RSA PRIVATE KEY"
/// let key = try RSAPrivateKey.generate(bits: 2048)
/// let signature = try key.sign(Array("header.payload".utf8))
/// let publicKey = try key.publicKey                   // to verify, or to publish as a JWK
/// ```
package final class RSAPrivateKey: @unchecked Sendable {
    // Safety: `key` is never changed after init; each signature makes its own EVP_MD_CTX.
    private let key: OpaquePointer

    /// A key from PEM text (PKCS#8 `BEGIN PRIVATE KEY` or PKCS#1 `BEGIN RSA PRIVATE KEY`, unencrypted).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when the text holds no usable RSA private key; the text is never
    ///   quoted.
    package convenience init(pem: String) throws {
        try self.init(owning: EVPPrivateKey.read(pem: pem))
    }

    private init(owning key: OpaquePointer) throws {
        guard EVP_PKEY_is_a(key, "RSA") == 1 else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "the private key is not an RSA key")
        }
        guard EVP_PKEY_get_bits(key) >= RSAPublicKey.minimumBits else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "an RSA key shorter than \(RSAPublicKey.minimumBits) bits is too short for RS256")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// A new random key of `bits` bits (at least 2,048).
    package static func generate(bits: Int32 = 2048) throws -> RSAPrivateKey {
        guard bits >= RSAPublicKey.minimumBits else {
            throw GQLError(.invalidArgument, "an RSA key of \(bits) bits is too short for RS256")
        }
        let key = try EVPPrivateKey.generate("RSA", "an RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, bits) }
        return try RSAPrivateKey(owning: key)
    }

    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (deterministic: the same message gives the same bytes).
    package func sign(_ message: [UInt8]) throws -> [UInt8] {
        try EVPPrivateKey.sign(message, key: key, algorithm: "RS256")
    }

    /// The matching public key.
    package var publicKey: RSAPublicKey {
        get throws {
            try RSAPublicKey(
                modulus: RSAPublicKey.bigNumber(key, OSSL_PKEY_PARAM_RSA_N),
                exponent: RSAPublicKey.bigNumber(key, OSSL_PKEY_PARAM_RSA_E))
        }
    }

    /// The key as unencrypted PKCS#8 PEM text (`BEGIN PRIVATE KEY`), for a test peer or a key file.
    package func pem() throws -> String {
        try OpenSSLBIO.writing { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }
}
