import CCrypto
import GQLCore

/// scrypt (RFC 7914) on libcrypto's `EVP_PBE_scrypt`: a salted, memory-hard password hash, for servers that keep
/// passwords (the Auth0 emulator) and must never keep them in clear.
///
/// ```swift
/// let salt = Scrypt.salt()                                          // 16 random bytes
/// let hash = try Scrypt.derive(Array(password.utf8), salt: salt)    // 32 bytes at the default cost
/// let same = Bytes.constantTimeEquals(hash, try Scrypt.derive(Array(typed.utf8), salt: salt))
/// ```
package enum Scrypt {
    /// The work factors: `n` (CPU and memory, a power of two), `r` (block size), `p` (parallelism). Memory is
    /// about 128 × n × r bytes.
    package struct Cost: Sendable, Hashable, Codable {
        package var n: UInt64
        package var r: UInt64
        package var p: UInt64

        package init(n: UInt64, r: UInt64, p: UInt64) {
            self.n = n
            self.r = r
            self.p = p
        }

        /// n = 2¹⁴, r = 8, p = 1: 16 MiB and some tens of milliseconds per hash, RFC 7914's interactive cost.
        package static let interactive = Cost(n: 1 << 14, r: 8, p: 1)

        /// The memory one hash needs, in bytes (a little over 128 × n × r × p).
        var memory: UInt64 { 128 * n * r * p + 128 * r * p + 1 << 20 }
    }

    /// The key of `length` bytes scrypt derives from `password` and `salt` at `cost`.
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for a cost that is not a power of two over 1 or too large
    ///   (more than 1 GiB, or r × p at 2³⁰ or more), `.crypto` when libcrypto fails.
    package static func derive(
        _ password: [UInt8], salt: [UInt8], cost: Cost = .interactive, length: Int = 32
    ) throws -> [UInt8] {
        guard cost.n > 1, cost.n & (cost.n - 1) == 0, cost.n <= 1 << 24, (1...1 << 10).contains(cost.r),
            (1...1 << 10).contains(cost.p), cost.memory <= 1 << 30, (1...1024).contains(length)
        else {
            throw GQLError(
                .invalidArgument,
                "scrypt's cost must have n a power of two (2…2²⁴), r and p 1…1024, at most 1 GiB, a key of 1…1024 bytes"
            )
        }
        var key = [UInt8](repeating: 0, count: length)
        let ok = password.withUnsafeBufferPointer { pass in
            salt.withUnsafeBufferPointer { salty in
                key.withUnsafeMutableBufferPointer { out in
                    pass.withMemoryRebound(to: CChar.self) { text in
                        EVP_PBE_scrypt(
                            text.baseAddress, text.count, salty.baseAddress, salty.count, cost.n, cost.r, cost.p,
                            cost.memory, out.baseAddress, out.count)
                    }
                }
            }
        }
        guard ok == 1 else {
            OpenSSLBIO.clearErrors()
            throw GQLError(.crypto, "libcrypto could not compute scrypt")
        }
        return key
    }

    /// `count` random bytes from the system's secure generator, for a salt.
    package static func salt(_ count: Int = 16) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<max(0, count)).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
