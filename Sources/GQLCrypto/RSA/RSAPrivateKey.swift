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
        let key = try OpenSSLBIO.reading(pem) { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }
        guard let key else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "the PEM text holds no unencrypted private key")
        }
        try self.init(owning: key)
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
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw GQLError(.crypto, "libcrypto has no RSA")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not generate an RSA key")
        }
        return try RSAPrivateKey(owning: key)
    }

    /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (deterministic: the same message gives the same bytes).
    package func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw GQLError(.crypto, "libcrypto could not allocate") }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, Algorithms.sha256, nil, key) == 1,
            message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1
        else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not start an RS256 signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer {
                EVP_DigestSign(context, out.baseAddress, &length, $0.baseAddress, $0.count)
            }
        }
        guard ok == 1 else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not make an RS256 signature")
        }
        return Array(signature.prefix(length))
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
