import CCrypto
import GQLCore

/// An RSA public key in OpenSSL's libcrypto, for RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signatures.
///
/// ```swift
/// let key = try RSAPublicKey(modulus: n, exponent: e)         // a JWK's "n" and "e", decoded
/// let same = try RSAPublicKey(pem: "-----BEGIN PUBLIC KEY-----\n…")
/// let ok = key.verify(signature, of: Array("header.payload".utf8))
/// ```
///
/// Keys shorter than 2,048 bits are refused, as RFC 7518 §3.3 requires for RS256.
package final class RSAPublicKey: @unchecked Sendable {
    // Safety: `key` is never changed after init; OpenSSL allows concurrent use of one EVP_PKEY for
    // verification (each call makes its own EVP_MD_CTX).
    let key: OpaquePointer
    /// The modulus size in bytes, which is also the size of every signature the key can check.
    package let byteCount: Int

    /// The smallest modulus accepted, in bits.
    package static let minimumBits: Int32 = 2048

    /// A key from its modulus and public exponent, big-endian (a JWK's `n` and `e` after base64url decoding).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when the numbers do not make a usable key.
    package convenience init(modulus: [UInt8], exponent: [UInt8]) throws {
        let modulus = Array(modulus.drop { $0 == 0 })
        guard !modulus.isEmpty, !exponent.drop(while: { $0 == 0 }).isEmpty else {
            throw GQLError(.crypto, "an RSA key needs a non-zero modulus and exponent")
        }
        guard exponent.count <= 8 else { throw GQLError(.crypto, "an RSA public exponent longer than 64 bits") }
        try self.init(owning: Self.fromData(modulus: modulus, exponent: exponent))
    }

    /// A key from PEM text: `BEGIN PUBLIC KEY` (SubjectPublicKeyInfo) or `BEGIN RSA PUBLIC KEY` (PKCS#1).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when the text holds no RSA public key.
    package convenience init(pem: String) throws {
        let key = try OpenSSLBIO.reading(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let key else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "the PEM text holds no public key")
        }
        try self.init(owning: key)
    }

    /// Takes ownership of `key` (freed here if it is refused).
    init(owning key: OpaquePointer) throws {
        guard EVP_PKEY_is_a(key, "RSA") == 1 else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "the key is not an RSA key")
        }
        let bits = EVP_PKEY_get_bits(key)
        guard bits >= Self.minimumBits else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "an RSA key of \(bits) bits is too short for RS256 (at least \(Self.minimumBits))")
        }
        self.key = key
        self.byteCount = Int(bits + 7) / 8
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message`.
    package func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        signature.count == byteCount && EVPPrivateKey.verify(signature, of: message, key: key)
    }

    /// The modulus and exponent, big-endian without leading zeros (a JWK's `n` and `e` before encoding).
    package var components: (modulus: [UInt8], exponent: [UInt8]) {
        (Self.bigNumber(key, OSSL_PKEY_PARAM_RSA_N), Self.bigNumber(key, OSSL_PKEY_PARAM_RSA_E))
    }

    static func bigNumber(_ key: OpaquePointer, _ name: String) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return [] }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int(BN_num_bits(number) + 7) / 8)
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return bytes
    }

    /// EVP_PKEY_PUBLIC_KEY: OSSL_KEYMGMT_SELECT_ALL_PARAMETERS (0x84) | OSSL_KEYMGMT_SELECT_PUBLIC_KEY (0x02); the
    /// macro is an expression Swift does not import.
    private static let selectPublicKey: Int32 = 0x86

    private static func fromData(modulus: [UInt8], exponent: [UInt8]) throws -> OpaquePointer {
        // The builder keeps the parameter names' pointers until OSSL_PARAM_BLD_to_param: they must outlive it.
        try OSSL_PKEY_PARAM_RSA_N.withCString { nName in
            try OSSL_PKEY_PARAM_RSA_E.withCString { eName in
                try fromData(modulus: modulus, exponent: exponent, names: (nName, eName))
            }
        }
    }

    private static func fromData(
        modulus: [UInt8], exponent: [UInt8], names: (UnsafePointer<CChar>, UnsafePointer<CChar>)
    ) throws -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw GQLError(.crypto, "libcrypto could not allocate") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer { BN_free(n); BN_free(e) }
        guard let n, let e, OSSL_PARAM_BLD_push_BN(builder, names.0, n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, names.1, e) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { throw GQLError(.crypto, "libcrypto could not hold the RSA numbers") }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw GQLError(.crypto, "libcrypto has no RSA")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, selectPublicKey, parameters) == 1, let key
        else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "the modulus and exponent do not make an RSA key")
        }
        return key
    }
}
