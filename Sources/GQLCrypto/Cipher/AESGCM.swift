import CCrypto
import GQLCore

/// AES-256-GCM over libcrypto's EVP interface: authenticated encryption for small files (GQLAuth's token file).
///
/// ```swift
/// let sealed = try AESGCM.seal(Array(json), key: key, associatedData: header)   // nonce ‖ ciphertext ‖ tag
/// let json = try AESGCM.open(sealed, key: key, associatedData: header)           // nil: it did not authenticate
/// ```
/// Every seal takes a fresh random 96-bit nonce, so one key may seal about 2³² messages before a repeat becomes a
/// real risk; callers that write often derive a key per file (``HKDFSHA256``).
package enum AESGCM {
    package static let keySize = 32
    package static let nonceSize = 12
    package static let tagSize = 16
    /// What ``seal(_:key:associatedData:)`` adds to the plaintext: the nonce before it, the tag after it.
    package static let overhead = nonceSize + tagSize

    /// `nonce ‖ ciphertext ‖ tag` of `plaintext` under the 32-byte `key`, authenticating `associatedData` too.
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for a key that is not 32 bytes, `.crypto` when libcrypto
    ///   fails.
    package static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        guard key.count == keySize else { throw GQLError(.invalidArgument, "an AES-256-GCM key must be 32 bytes") }
        var nonce = [UInt8](repeating: 0, count: nonceSize)
        guard RAND_bytes(&nonce, Int32(nonceSize)) == 1 else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto had no random bytes for a nonce")
        }
        var out = nonce + [UInt8](repeating: 0, count: plaintext.count + tagSize)
        let ok = try withContext { context in
            out.withUnsafeMutableBufferPointer { out -> Bool in
                guard let base = out.baseAddress else { return false }
                var length: Int32 = 0
                let body = base + nonceSize
                guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
                    associatedData.isEmpty
                        || EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1,
                    plaintext.isEmpty
                        || EVP_EncryptUpdate(context, body, &length, plaintext, Int32(plaintext.count)) == 1,
                    EVP_EncryptFinal_ex(context, body + plaintext.count, &length) == 1
                else { return false }
                return EVP_CIPHER_CTX_ctrl(
                    context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), body + plaintext.count) == 1
            }
        }
        guard ok else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not encrypt with AES-256-GCM")
        }
        return out
    }

    /// The plaintext of `sealed` (`nonce ‖ ciphertext ‖ tag`), or nil when it does not authenticate under `key`
    /// and `associatedData` (a wrong key, or altered bytes); no unauthenticated byte is returned.
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for a key that is not 32 bytes, `.crypto` when libcrypto
    ///   fails.
    package static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8]? {
        guard key.count == keySize else { throw GQLError(.invalidArgument, "an AES-256-GCM key must be 32 bytes") }
        guard sealed.count >= overhead else { return nil }
        let count = sealed.count - overhead
        // One byte more than the plaintext, so the buffer has an address even for an empty one.
        var plaintext = [UInt8](repeating: 0, count: count + 1)
        let ok = try withContext { context in
            sealed.withUnsafeBufferPointer { sealed -> Bool in
                plaintext.withUnsafeMutableBufferPointer { out -> Bool in
                    guard let input = sealed.baseAddress, let output = out.baseAddress else { return false }
                    var length: Int32 = 0
                    var tag = Array(sealed[(nonceSize + count)...])
                    guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, input) == 1,
                        associatedData.isEmpty
                            || EVP_DecryptUpdate(
                                context, nil, &length, associatedData, Int32(associatedData.count)) == 1,
                        count == 0
                            || EVP_DecryptUpdate(context, output, &length, input + nonceSize, Int32(count)) == 1,
                        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1
                    else { return false }
                    return EVP_DecryptFinal_ex(context, output + count, &length) == 1
                }
            }
        }
        guard ok else {
            OpenSSLBIO.clearErrors()
            plaintext.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            return nil
        }
        plaintext.removeLast()
        return plaintext
    }

    private static func withContext<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        guard let context = EVP_CIPHER_CTX_new() else { throw GQLError(.crypto, "libcrypto is out of memory") }
        defer { EVP_CIPHER_CTX_free(context) }
        return try body(context)
    }
}
