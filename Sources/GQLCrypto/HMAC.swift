import CCrypto
import Foundation

/// HMAC-SHA256 over OpenSSL's libcrypto.
///
/// ```swift
/// let tag = HMACSHA256.authenticate(Data("message".utf8), key: Data("secret".utf8))   // 32 bytes
/// ```
package enum HMACSHA256 {
    /// The authentication code of `message` under `key` (any length; longer than 64 bytes is hashed first, as
    /// RFC 2104 says).
    package static func authenticate(_ message: some ContiguousBytes, key: some ContiguousBytes) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        let empty: UInt8 = 0
        let result = withUnsafePointer(to: empty) { fallback in
            key.withUnsafeBytes { keyBuffer in
                message.withUnsafeBytes { messageBuffer in
                    tag.withUnsafeMutableBufferPointer { out in
                        HMAC(
                            EVP_sha256(), keyBuffer.baseAddress ?? UnsafeRawPointer(fallback), Int32(keyBuffer.count),
                            (messageBuffer.baseAddress ?? UnsafeRawPointer(fallback)).assumingMemoryBound(to: UInt8.self),
                            messageBuffer.count, out.baseAddress, &length)
                    }
                }
            }
        }
        // HMAC() fails only when the process is out of memory.
        return result == nil ? [] : tag
    }
}
