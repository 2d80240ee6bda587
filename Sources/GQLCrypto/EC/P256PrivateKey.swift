import CCrypto
import GQLCore

/// A NIST P-256 private key in OpenSSL's libcrypto that makes ES256 signatures (RFC 7518 §3.4): for a server that
/// mints tokens another service verifies, such as OneSignal's identity-verification JWTs, and for tests.
///
/// ```swift
/// let key = try P256PrivateKey(pem: pemText)          // "BEGIN PRIVATE KEY" or "BEGIN EC PRIVATE KEY"
/// let key = try P256PrivateKey.generate()
/// let signature = try key.sign(Array("header.payload".utf8))   // 64 bytes: R then S
/// let published = try key.publicKeyPEM()                       // "BEGIN PUBLIC KEY", for the verifier
/// ```
package final class P256PrivateKey: @unchecked Sendable {
    // Safety: `key` is never changed after init; each signature makes its own EVP_MD_CTX.
    private let key: OpaquePointer

    /// The length of each half (R, S) of a signature and of the curve's field elements, in bytes.
    static let coordinateBytes = 32

    /// A key from PEM text (PKCS#8 `BEGIN PRIVATE KEY` or SEC 1 `BEGIN EC PRIVATE KEY`, unencrypted).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when the text holds no unencrypted P-256 private key; the text is
    ///   never quoted.
    package convenience init(pem: String) throws {
        try self.init(owning: EVPPrivateKey.read(pem: pem))
    }

    private init(owning key: OpaquePointer) throws {
        guard EVP_PKEY_is_a(key, "EC") == 1, Self.curve(of: key) == "prime256v1" else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "the private key is not an elliptic-curve key on P-256, which ES256 needs")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// A new random key.
    package static func generate() throws -> P256PrivateKey {
        let key = try EVPPrivateKey.generate("EC", "a P-256") { EVP_PKEY_CTX_set_group_name($0, "P-256") }
        return try P256PrivateKey(owning: key)
    }

    /// The ECDSA P-256 SHA-256 signature of `message` as JWS wants it: R and S, 32 bytes each, big-endian
    /// (libcrypto gives DER, which is converted). Randomized: the same message gives different bytes each time.
    package func sign(_ message: [UInt8]) throws -> [UInt8] {
        try Self.raw(fromDER: EVPPrivateKey.sign(message, key: key, algorithm: "ES256"))
    }

    /// The public half as PEM text (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo), for whoever verifies.
    package func publicKeyPEM() throws -> String {
        try OpenSSLBIO.writing { bio in PEM_write_bio_PUBKEY(bio, key) }
    }

    /// The key as unencrypted PKCS#8 PEM text (`BEGIN PRIVATE KEY`), for a key file or a test.
    package func pem() throws -> String {
        try OpenSSLBIO.writing { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }

    /// R ‖ S from a DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs), each left-padded to 32 bytes.
    package static func raw(fromDER der: [UInt8]) throws -> [UInt8] {
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature = decoded else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto gave an ECDSA signature that does not parse")
        }
        defer { ECDSA_SIG_free(signature) }
        var out = [UInt8](repeating: 0, count: 2 * coordinateBytes)
        let width = Int32(coordinateBytes)
        let written = out.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(ECDSA_SIG_get0_r(signature), base, width) == width
                && BN_bn2binpad(ECDSA_SIG_get0_s(signature), base + coordinateBytes, width) == width
        }
        guard written else { throw GQLError(.crypto, "an ECDSA signature half is longer than 32 bytes") }
        return out
    }

    /// The curve's OpenSSL short name, or nil.
    static func curve(of key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else {
            OpenSSLBIO.clearErrors()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
