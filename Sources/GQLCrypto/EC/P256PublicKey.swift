import CCrypto
import GQLCore

/// A NIST P-256 public key in OpenSSL's libcrypto that checks ES256 signatures (RFC 7518 §3.4): for a server that
/// verifies tokens minted by another (the OneSignal emulator's identity verification).
///
/// ```swift
/// let key = try P256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\n…")
/// let ok = key.verify(signature, of: Array("header.payload".utf8))   // signature: 64 bytes, R then S
/// ```
package final class P256PublicKey: @unchecked Sendable {
    // Safety: `key` is never changed after init; each check makes its own EVP_MD_CTX.
    private let key: OpaquePointer

    /// A key from PEM text (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when the text holds no P-256 public key.
    package init(pem: String) throws {
        let key = try OpenSSLBIO.reading(pem) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let key else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "the PEM text holds no public key")
        }
        guard EVP_PKEY_is_a(key, "EC") == 1, P256PrivateKey.curve(of: key) == "prime256v1" else {
            EVP_PKEY_free(key)
            throw GQLError(.crypto, "the public key is not an elliptic-curve key on P-256, which ES256 needs")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (R ‖ S, 32 bytes each, as JWS carries it) is this key's ECDSA P-256 SHA-256 signature
    /// of `message`.
    package func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let der = Self.der(fromRaw: signature) else { return false }
        return EVPPrivateKey.verify(der, of: message, key: key)
    }

    /// A DER `ECDSA-Sig-Value` from R ‖ S; nil unless `raw` is 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        let width = P256PrivateKey.coordinateBytes
        guard raw.count == 2 * width, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer { buffer in
            (
                BN_bin2bn(buffer.baseAddress, Int32(width), nil),
                BN_bin2bn(buffer.baseAddress.map { $0 + width }, Int32(width), nil)
            )
        }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        // ECDSA_SIG_set0 takes both numbers.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
