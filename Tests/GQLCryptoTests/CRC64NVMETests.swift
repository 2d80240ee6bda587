import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLCrypto

/// CRC-64/NVME: the catalogue's check value, S3's base64 form, and the table-driven code against a bitwise
/// reference written from the definition (reflected polynomial, all-ones start and end), whole, in pieces and
/// combined.
@Suite struct CRC64NVMETests {
    /// The definition, one bit at a time.
    static func reference(_ bytes: [UInt8]) -> UInt64 {
        var crc = UInt64.max
        for byte in bytes {
            crc ^= UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : crc >> 1 }
        }
        return ~crc
    }

    /// Deterministic bytes (no randomness, so no seed to print).
    static func bytes(_ count: Int, _ salt: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 7) &+ salt &* 29) }
    }

    @Test func theCheckValueAndS3sForm() {
        #expect(CRC64NVME(Array("123456789".utf8)).value == 0xAE8B_1486_0A79_9888)
        #expect(CRC64NVME(Array("123456789".utf8)).base64 == "rosUhgp5mIg=")
        #expect(CRC64NVME().base64 == "AAAAAAAAAAA=")
        #expect(CRC64NVME(base64: "rosUhgp5mIg=")?.value == 0xAE8B_1486_0A79_9888)
        #expect(CRC64NVME(base64: "y/Q5Jg==") == nil)
    }

    @Test func matchesTheBitwiseDefinitionWholeInPiecesAndCombined() {
        for count in Array(0...40) + [63, 64, 65, 255, 256, 1000, 4097] {
            let data = Self.bytes(count, count)
            let expected = Self.reference(data)
            #expect(CRC64NVME(data).value == expected, "\(count) bytes")
            for split in Set([0, 1, count / 3, count / 2, max(count - 1, 0), count]) where split <= count {
                var pieces = CRC64NVME()
                pieces.update(Array(data[..<split]))
                pieces.update(Array(data[split...]))
                #expect(pieces.value == expected, "\(count) bytes split at \(split)")
                let combined = CRC64NVME.combine(
                    CRC64NVME(Array(data[..<split])), CRC64NVME(Array(data[split...])), Int64(count - split))
                #expect(combined.value == expected, "\(count) bytes combined at \(split)")
            }
        }
    }

    /// Seeded random buffers on both sides of the size where the three-chain path starts (three thirds of at least
    /// 4,096 bytes), whole and updated in random pieces, against the bitwise definition; and CRC32's the same way
    /// against its bitwise definition (it runs through the same three-chain driver).
    @Test func randomBuffersMatchTheBitwiseDefinition() {
        let seed = TestSeed.make("CRC64NVMETests.randomBuffersMatchTheBitwiseDefinition")
        var rng = SplitMix64(seed: seed)
        let edges = [3 * 4096 - 1, 3 * 4096, 3 * 4096 + 1, 3 * 4096 + 7, 3 * 4104 + 5, 3 * 4096 * 2 + 3]
        let sizes = edges + (0..<12).map { _ in Int(rng.next() % 120_000) }
        for (index, count) in sizes.enumerated() {
            let data = Array(TestSeed.bytes(count, seed: seed &+ UInt64(index)))
            let expected = Self.reference(data)
            #expect(CRC64NVME(data).value == expected, "\(count) bytes, seed \(seed)")
            var pieces = CRC64NVME()
            var offset = 0
            while offset < count {
                let length = min(count - offset, Int(rng.next() % 40_000))
                pieces.update(Array(data[offset..<offset + length]))
                offset += length
            }
            #expect(pieces.value == expected, "\(count) bytes in pieces, seed \(seed)")
            var crc32 = UInt32.max
            for byte in data {
                crc32 ^= UInt32(byte)
                for _ in 0..<8 { crc32 = crc32 & 1 == 1 ? (crc32 >> 1) ^ 0xEDB8_8320 : crc32 >> 1 }
            }
            #expect(CRC32(data).value == ~crc32, "CRC32 of \(count) bytes, seed \(seed)")
        }
    }
}
