import CCrypto
import GQLCore

/// What the RSA and P-256 keys share: a new key from libcrypto's generator, SHA-256 signatures by EVP_DigestSign,
/// and their checks by EVP_DigestVerify.
enum EVPPrivateKey {
    /// The unencrypted private key in PEM text (PKCS#8, or the algorithm's own form). The caller owns the key.
    ///
    /// An encrypted key is refused at once: the passphrase callback answers "no passphrase" (without one,
    /// libcrypto's default callback would ask for it on the terminal and block the thread).
    /// - Throws: ``GQLCore/GQLError`` `.crypto` when there is none or it is encrypted; the text is never quoted.
    static func read(pem: String) throws -> OpaquePointer {
        var askedForPassphrase = false
        let key = try withUnsafeMutablePointer(to: &askedForPassphrase) { asked in
            try OpenSSLBIO.reading(pem) { bio in
                PEM_read_bio_PrivateKey(
                    bio, nil,
                    { _, _, _, asked in
                        asked?.assumingMemoryBound(to: Bool.self).pointee = true
                        return -1
                    }, asked)
            }
        }
        guard let key else {
            OpenSSLBIO.clearErrors()
            if askedForPassphrase {
                throw GQLError(
                    .crypto, "the private key is encrypted; give it unencrypted (PKCS#8 without a passphrase)")
            }
            throw GQLError(.crypto, "the PEM text holds no unencrypted private key")
        }
        return key
    }

    /// A new key of libcrypto's `type` ("RSA", "EC"), its generator set up by `configure` (which returns 1 on
    /// success); `what` names the key in errors. The caller owns the key.
    static func generate(_ type: String, _ what: String, configure: (OpaquePointer) -> Int32) throws -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw GQLError(.crypto, "libcrypto cannot make \(what) keys")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context) == 1, EVP_PKEY_generate(context, &key) == 1,
            let key
        else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not generate \(what) key")
        }
        return key
    }

    /// The signature of `message` under `key` as libcrypto makes it: PKCS#1 v1.5 bytes for RSA, a DER
    /// `ECDSA-Sig-Value` for an elliptic-curve key. `algorithm` names the JWS algorithm in errors.
    static func sign(_ message: [UInt8], key: OpaquePointer, algorithm: String) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw GQLError(.crypto, "libcrypto could not allocate") }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, Algorithms.sha256, nil, key) == 1,
            message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1
        else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not start an \(algorithm) signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer {
                EVP_DigestSign(context, out.baseAddress, &length, $0.baseAddress, $0.count)
            }
        }
        guard ok == 1 else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not make an \(algorithm) signature")
        }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is `key`'s SHA-256 signature of `message` as libcrypto checks it (PKCS#1 v1.5 bytes for
    /// RSA, a DER `ECDSA-Sig-Value` for an elliptic-curve key).
    static func verify(_ signature: [UInt8], of message: [UInt8], key: OpaquePointer) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, Algorithms.sha256, nil, key) == 1 else {
            OpenSSLBIO.clearErrors()
            return false
        }
        let ok = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { text in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, text.baseAddress ?? sig.baseAddress, text.count)
            }
        }
        if ok != 1 { OpenSSLBIO.clearErrors() }
        return ok == 1
    }
}
