import Foundation

/// CRC-64/NVME as S3's `x-amz-checksum-crc64nvme` carries it (polynomial 0xAD93D23594C93659, reflected, initial and
/// final value all ones; `123456789` gives 0xAE8B14860A799888). S3 gives it to every object uploaded without a
/// checksum of its own, over the whole object however it was uploaded (a "full object" checksum, which the parts'
/// CRCs ``combine(_:_:_:)`` into). A checksum against accidental damage, not a cryptographic digest.
///
/// Slicing-by-8 (eight bytes a step through eight 256-entry tables), on three thirds of a large buffer at once, the
/// thirds' CRCs then combined (as CRC32): 3.9 GB/s (3,946 MB/s) on one core here against 1.9 GB/s on one chain
/// (Benchmarks/crc-throughput.sh, Docs/Performance.md).
///
/// ```swift
/// var crc = CRC64NVME()
/// crc.update(chunk1); crc.update(chunk2)
/// headers.append(("x-amz-checksum-crc64nvme", crc.base64))
/// ```
package struct CRC64NVME: Sendable, Equatable {
    /// The reflected polynomial.
    private static let polynomial: UInt64 = 0x9A6C_9329_AC4B_C9B5

    /// The CRC of the bytes added so far.
    package private(set) var value: UInt64 = 0

    package init() {}

    /// The CRC of `bytes`.
    package init(_ bytes: some ContiguousBytes) {
        update(bytes)
    }

    /// A CRC known by its value (one S3 answered, or one kept in a record).
    package init(value: UInt64) { self.value = value }

    /// Table `k` (at `k × 256`) maps a byte to the CRC of that byte followed by `k` zero bytes.
    private static let tables = ReflectedCRC<UInt64>.tables(polynomial, slices: 8)

    /// Adds `bytes` to the CRC.
    package mutating func update(_ bytes: some ContiguousBytes) {
        let value = self.value
        self.value = bytes.withUnsafeBytes { buffer in
            Self.tables.withUnsafeBufferPointer { table in
                ReflectedCRC.update(buffer, value, width: 8, table, combine: Self.combine) { Self.step($0, $1, table) }
            }
        }
    }

    /// The 8 bytes at `pointer` through the tables, after the running value `crc`.
    @inline(__always)
    private static func step(_ pointer: UnsafeRawPointer, _ crc: UInt64, _ table: UnsafeBufferPointer<UInt64>)
        -> UInt64
    {
        let word = pointer.loadUnaligned(as: UInt64.self).littleEndian ^ crc
        // The byte `n` places before the end of the step goes through table `n`.
        return table[7 * 256 + Int(word & 0xFF)] ^ table[6 * 256 + Int((word >> 8) & 0xFF)]
            ^ table[5 * 256 + Int((word >> 16) & 0xFF)] ^ table[4 * 256 + Int((word >> 24) & 0xFF)]
            ^ table[3 * 256 + Int((word >> 32) & 0xFF)] ^ table[2 * 256 + Int((word >> 40) & 0xFF)]
            ^ table[256 + Int((word >> 48) & 0xFF)] ^ table[Int(word >> 56)]
    }

    /// `x^(2^k)` modulo the polynomial for k = 0…63.
    private static let powers = ReflectedCRC<UInt64>.powers(polynomial)

    /// The CRC of `A` followed by `B` from the CRC of `A`, the CRC of `B` and `B`'s length in bytes (as zlib's
    /// `crc32_combine` for CRC-32): `crcA × x^(8 × lengthB) + crcB`. How a full-object checksum follows from the
    /// parts' CRCs.
    package static func combine(_ a: CRC64NVME, _ b: CRC64NVME, _ lengthB: Int64) -> CRC64NVME {
        CRC64NVME(value: combine(a.value, b.value, lengthB))
    }

    private static func combine(_ a: UInt64, _ b: UInt64, _ lengthB: Int64) -> UInt64 {
        ReflectedCRC.combine(a, b, lengthB, polynomial, powers)
    }

    /// The CRC's eight bytes, most significant first.
    package var bytes: [UInt8] { stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// The CRC as S3 writes it: its eight bytes, most significant first, in base64 (`rosUhgp5mIg=` for
    /// `123456789`).
    package var base64: String { Data(bytes).base64EncodedString() }

    /// The CRC S3 wrote in base64; `nil` when `text` is not eight bytes in base64.
    package init?(base64 text: String) {
        guard let data = Data(base64Encoded: text), data.count == 8 else { return nil }
        self.init(value: data.reduce(0) { $0 << 8 | UInt64($1) })
    }
}
