import CCrypto
import Foundation
import GQLCore

/// A message digest over OpenSSL's libcrypto, streamed: SHA-256 for signatures, MD5 only to check S3 ETags.
///
/// ```swift
/// var digest = try Digest(.sha256)
/// try digest.update(chunk1); try digest.update(chunk2)
/// let bytes = try digest.finalize()          // 32 bytes
/// ```
package struct Digest: ~Copyable {
    /// The algorithms the toolkit uses.
    package enum Algorithm: Sendable {
        case sha256
        /// Not for security: S3's ETags are MD5 digests of single-part objects.
        case md5

        var byteCount: Int { self == .sha256 ? 32 : 16 }
        var md: OpaquePointer? { self == .sha256 ? Algorithms.sha256 : Algorithms.md5 }
    }

    private let context: OpaquePointer
    private let algorithm: Algorithm

    /// A digest ready for ``update(_:)``.
    /// - Throws: ``GQLError`` `.crypto` when libcrypto cannot allocate or start it.
    package init(_ algorithm: Algorithm) throws {
        guard let context = EVP_MD_CTX_new() else { throw GQLError(.crypto, "libcrypto could not allocate a digest") }
        guard EVP_DigestInit_ex(context, algorithm.md, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw GQLError(.crypto, "libcrypto could not start a \(algorithm) digest")
        }
        self.context = context
        self.algorithm = algorithm
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the digest.
    package mutating func update(_ bytes: some ContiguousBytes) throws {
        let ok = bytes.withUnsafeBytes { buffer in
            buffer.isEmpty ? 1 : EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
        }
        guard ok == 1 else { throw GQLError(.crypto, "libcrypto could not update a \(algorithm) digest") }
    }

    /// The digest of everything added; the digest is used up.
    package consuming func finalize() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: algorithm.byteCount)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        guard ok == 1, length == algorithm.byteCount else {
            throw GQLError(.crypto, "libcrypto could not finish a \(algorithm) digest")
        }
        return bytes
    }

    /// The digest of `bytes` in one call (empty only if the process is out of memory).
    package static func hash(_ algorithm: Algorithm, _ bytes: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: algorithm.byteCount)
        var length: UInt32 = 0
        let empty: UInt8 = 0
        let ok = bytes.withUnsafeBytes { buffer in
            digest.withUnsafeMutableBufferPointer { out in
                // EVP_Digest reads `count` bytes; an empty buffer may have no base address.
                withUnsafePointer(to: empty) { fallback in
                    EVP_Digest(
                        buffer.baseAddress ?? UnsafeRawPointer(fallback), buffer.count, out.baseAddress, &length,
                        algorithm.md, nil)
                }
            }
        }
        return ok == 1 ? digest : []
    }
}

/// SHA-256 in one call.
package enum SHA256 {
    package static let byteCount = 32

    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: some ContiguousBytes) -> [UInt8] { Digest.hash(.sha256, bytes) }
}

/// MD5 in one call, only to check S3 ETags; never for security.
package enum MD5 {
    /// The 16-byte digest of `bytes`.
    package static func hash(_ bytes: some ContiguousBytes) -> [UInt8] { Digest.hash(.md5, bytes) }
}
