import CCrypto
import GQLCore

/// PBKDF2-HMAC-SHA512 (RFC 8018) on libcrypto: stretches a passphrase into a key, at SQLCipher 4's default cost
/// unless told otherwise.
///
/// ```swift
/// let key = try PBKDF2SHA512.derive(Array(passphrase.utf8), salt: salt)   // 32 bytes, 256,000 rounds
/// ```
package enum PBKDF2SHA512 {
    /// SQLCipher 4's default rounds for PBKDF2-HMAC-SHA512 (and GQLStore's for a passphrase).
    package static let defaultIterations = 256_000

    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for no rounds or a length outside 1…1024, `.crypto` when
    ///   libcrypto fails.
    package static func derive(
        _ password: [UInt8], salt: [UInt8], iterations: Int = defaultIterations, length: Int = 32
    ) throws -> [UInt8] {
        guard iterations >= 1, iterations <= Int(Int32.max), (1...1024).contains(length) else {
            throw GQLError(.invalidArgument, "PBKDF2 needs at least one round and a key of 1…1024 bytes")
        }
        var key = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { text in
                PKCS5_PBKDF2_HMAC(
                    text.baseAddress, Int32(text.count), salt, Int32(salt.count), Int32(iterations), EVP_sha512(),
                    Int32(length), &key)
            }
        }
        guard ok == 1 else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not compute PBKDF2-HMAC-SHA512")
        }
        return key
    }
}

/// HKDF-SHA256 (RFC 5869), extract then expand: one key in, independent subkeys out, each named by `info` (a
/// label and, say, a file id), so a key that serves many files or purposes never uses the same bytes twice.
///
/// ```swift
/// let fileKey = try HKDFSHA256.derive(masterKey, salt: fileId, info: Array("tokens".utf8))   // 32 bytes
/// ```
package enum HKDFSHA256 {
    /// `length` bytes (1 … 255 × 32) of key material.
    /// - Throws: ``GQLError`` `.invalidArgument` for a length out of range, `.crypto` when libcrypto fails (out of
    ///   memory): never an empty or short key.
    package static func derive(_ key: [UInt8], salt: [UInt8], info: [UInt8], length: Int = 32) throws -> [UInt8] {
        guard length > 0, length <= 255 * 32 else {
            throw GQLError(.invalidArgument, "HKDF-SHA256 gives 1…8160 bytes; \(length) were asked for")
        }
        var pseudorandom = HMACSHA256.authenticate(key, key: salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt)
        defer { pseudorandom.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        guard pseudorandom.count == 32 else { throw GQLError(.crypto, "libcrypto could not compute HKDF-SHA256") }
        var output: [UInt8] = []
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            block = HMACSHA256.authenticate(block + info + [counter], key: pseudorandom)
            guard block.count == 32 else { throw GQLError(.crypto, "libcrypto could not compute HKDF-SHA256") }
            output += block
            counter &+= 1
        }
        block.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        return Array(output.prefix(length))
    }
}
