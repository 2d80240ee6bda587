import CCrypto
import Foundation
import GQLCore

/// HMAC-SHA256 over OpenSSL's libcrypto.
///
/// ```swift
/// let tag = HMACSHA256.authenticate(Data("message".utf8), key: Data("secret".utf8))   // 32 bytes
/// let key = try HMACSHA256.Key(signingKey)         // keyed once, for many messages
/// let same = try key.authenticate(Data("message".utf8))
/// ```
package enum HMACSHA256 {
    /// The authentication code of `message` under `key` (any length; longer than 64 bytes is hashed first, as
    /// RFC 2104 says). Empty only if the process is out of memory.
    package static func authenticate(_ message: some ContiguousBytes, key: some ContiguousBytes) -> [UInt8] {
        (try? Key(key).authenticate(message)) ?? []
    }

    /// A key set up once: OpenSSL's HMAC context with the key's inner and outer blocks computed. Each message
    /// takes a context from a small pool and re-initialises it with the same key (no allocation, no algorithm
    /// lookup); a pool that is empty because other threads hold every context copies the keyed one.
    package final class Key: @unchecked Sendable {
        // Safety: `template` is only read (EVP_MAC_CTX_dup) after init; OpenSSL allows concurrent reads of a
        // context that nobody updates. A pooled context is used by one thread between take and put back.
        private let template: OpaquePointer
        private let pool = GQLLocked<[OpaquePointer]>([])
        /// Contexts kept for reuse; more threads at once copy and free their own.
        private static let poolLimit = 8

        /// - Throws: ``GQLError`` `.crypto` when libcrypto cannot set up the context.
        package init(_ key: some ContiguousBytes) throws {
            guard let mac = Algorithms.hmac, let context = EVP_MAC_CTX_new(mac) else {
                throw GQLError(.crypto, "libcrypto could not set up HMAC-SHA256")
            }
            let empty: UInt8 = 0
            let ok = key.withUnsafeBytes { buffer in
                withUnsafePointer(to: empty) { fallback in
                    "SHA256".withCString { digest in
                        OSSL_MAC_PARAM_DIGEST.withCString { name in
                            var parameters = [
                                OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: digest), 0),
                                OSSL_PARAM_construct_end(),
                            ]
                            return EVP_MAC_init(
                                context,
                                (buffer.baseAddress ?? UnsafeRawPointer(fallback)).assumingMemoryBound(to: UInt8.self),
                                buffer.count, &parameters)
                        }
                    }
                }
            }
            guard ok == 1 else {
                EVP_MAC_CTX_free(context)
                throw GQLError(.crypto, "libcrypto could not key HMAC-SHA256")
            }
            template = context
        }

        deinit {
            EVP_MAC_CTX_free(template)
            for context in pool.withLock({ $0 }) { EVP_MAC_CTX_free(context) }
        }

        /// The authentication code of `message` under this key.
        package func authenticate(_ message: some ContiguousBytes) throws -> [UInt8] {
            guard let context = pool.withLock({ $0.popLast() }) ?? EVP_MAC_CTX_dup(template) else {
                throw GQLError(.crypto, "libcrypto could not copy an HMAC context")
            }
            var tag = [UInt8](repeating: 0, count: SHA256.byteCount)
            var length = 0
            // A key of nil re-initialises the context with the key it was set up with.
            let ok = message.withUnsafeBytes { buffer in
                tag.withUnsafeMutableBufferPointer { out in
                    EVP_MAC_init(context, nil, 0, nil) == 1
                        && (buffer.isEmpty
                            ? 1
                            : EVP_MAC_update(
                                context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count)) == 1
                        && EVP_MAC_final(context, out.baseAddress, &length, out.count) == 1
                }
            }
            let kept = pool.withLock { pool in
                guard ok, pool.count < Self.poolLimit else { return false }
                pool.append(context)
                return true
            }
            if !kept { EVP_MAC_CTX_free(context) }
            guard ok, length == SHA256.byteCount else { throw GQLError(.crypto, "libcrypto could not finish an HMAC") }
            return tag
        }
    }
}

/// libcrypto algorithms fetched once per process (an implicit fetch on every call costs a lookup under a lock).
enum Algorithms {
    // Safety: fetched once, never freed, and OpenSSL's algorithm objects are safe to share between threads.
    nonisolated(unsafe) static let hmac: OpaquePointer? = EVP_MAC_fetch(nil, "HMAC", nil)
    nonisolated(unsafe) static let sha256: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)
    nonisolated(unsafe) static let md5: OpaquePointer? = EVP_MD_fetch(nil, "MD5", nil)
}

/// HMAC-SHA1 over libcrypto's one-shot `EVP_Q_mac`: only for checking legacy signatures that still name it
/// (S3's Signature Version 2 presigned URLs, which botocore makes by default); never for new ones.
///
/// ```swift
/// let tag = HMACSHA1.authenticate(Array("GET\n\n\n1700000000\n/bucket/key".utf8), key: Array(secret.utf8))   // 20 bytes
/// ```
package enum HMACSHA1 {
    /// The authentication code of `message` under `key`; empty only if libcrypto fails (out of memory).
    package static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length = 0
        let ok = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { data in
                out.withUnsafeMutableBufferPointer { output in
                    EVP_Q_mac(
                        nil, "HMAC", nil, "SHA1", nil, keyBytes.baseAddress, keyBytes.count, data.baseAddress,
                        data.count, output.baseAddress, output.count, &length) != nil
                }
            }
        }
        return ok && length == 20 ? out : []
    }
}
