import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLServices

/// CRC-32 on known values (zlib's `crc32` gives the same), and the checksums GQLStorage's uploads carry, read back
/// from each ``StorageServer`` (signature checking on, so the checksum headers are signed and checked with the rest).
@Suite(.serialized) struct StorageChecksumTests {
    @Test(arguments: [
        ("", UInt32(0)),
        ("123456789", 0xCBF4_3926),
        ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
    ])
    func crc32OfKnownStrings(text: String, crc: UInt32) {
        #expect(CRC32(Data(text.utf8)).value == crc)
    }

    @Test func crc32InPiecesEqualsCRC32AtOnce() {
        let million = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(CRC32(million).value == 0xDC25_BFBC)
        // Splits at every alignment: the eight-byte steps and the byte-at-a-time tail must agree.
        for split in [1, 3, 7, 8, 9, 4093, 999_999] {
            var crc = CRC32()
            crc.update(million.prefix(split))
            crc.update(million.dropFirst(split))
            #expect(crc.value == 0xDC25_BFBC)
        }
        #expect(CRC32(Data("123456789".utf8)).base64 == "y/Q5Jg==")
        let parts = [CRC32(Data("123456789".utf8)), CRC32(million)]
        #expect(CRC32.composite(parts) == "TKXZ+Q==-2")
        #expect(CRC32.isComposite("TKXZ+Q==-2", of: parts))
        #expect(CRC32.isComposite("TKXZ+Q==", of: parts))
        #expect(!CRC32.isComposite("TKXZ+Q==-3", of: parts))
        #expect(!CRC32.isComposite("TKXZ+Q=", of: parts))
        #expect(!CRC32.isComposite("y/Q5Jg==-2", of: parts))
    }

    /// CRC-32 bit by bit, as the polynomial defines it: the oracle for the table-driven one.
    static func bitwiseCRC32(_ bytes: Data) -> UInt32 {
        var crc = UInt32.max
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func crc32OfRandomBytesAroundEveryPathEqualsTheBitwiseCRC() {
        // Below and above the size where the buffer is split in three chains, odd tails, one buffer after another.
        let data = StorageTests.bytes((1 << 20) + 13, seed: 99)
        for count in [0, 1, 15, 16, 17, 12_287, 12_288, 12_289, 12_303, 49_157, data.count] {
            let bytes = data.prefix(count)
            #expect(CRC32(bytes).value == Self.bitwiseCRC32(bytes), "\(count) bytes")
        }
        var crc = CRC32()
        crc.update(data.prefix(50_000))
        crc.update(data.dropFirst(50_000))
        #expect(crc.value == Self.bitwiseCRC32(data))
        let (a, b) = (data.prefix(777), data.dropFirst(777))
        #expect(CRC32.combine(CRC32(a).value, CRC32(b).value, b.count) == CRC32(data).value)
    }

    /// The object's checksum as S3 keeps it: `x-amz-checksum-crc32` and `x-amz-checksum-type` of a GET with checksum
    /// mode on (moto's HEAD leaves out a composite checksum's part count and type).
    static func storedChecksum(_ storage: GQLStorage, _ bucket: String, _ key: String) async throws -> (
        crc: String?, type: String?
    ) {
        var get = GQLStorage.Call(method: "GET", bucket: bucket, key: key, operation: "download")
        get.headers.append(("x-amz-checksum-mode", "ENABLED"))
        let response = try await storage.send(get)
        return (
            response.headers.first(name: "x-amz-checksum-crc32"), response.headers.first(name: "x-amz-checksum-type")
        )
    }

    @Test(arguments: StorageServer.allCases)
    func uploadsCarryTheirCRC32AndMultipartUploadsGetTheCompositeOfTheirParts(_ server: StorageServer) async throws {
        try await StorageTests.withStorage(server, configure: StorageTests.multipart(inFlight: 2)) { storage, _ in
            try await storage.createBucket("checksums")
            try await storage.upload("checksums", "small.txt", Data("123456789".utf8))
            #expect(try await Self.storedChecksum(storage, "checksums", "small.txt").crc == "y/Q5Jg==")

            // The server computes each part's CRC-32 from the bytes it stored, then the composite of them.
            let size = (11 << 20) + 777
            let data = StorageTests.bytes(size, seed: 12)
            let directory = try TemporaryFiles()
            let source = directory.url("parts.bin")
            try data.write(to: source)
            try await storage.upload("checksums", "parts.bin", file: source)
            let parts = stride(from: 0, to: size, by: 5 << 20).map { start in
                CRC32(data[start..<min(start + (5 << 20), size)])
            }
            let stored = try await Self.storedChecksum(storage, "checksums", "parts.bin")
            #expect(stored.crc == CRC32.composite(parts))
            #expect(stored.crc?.hasSuffix("-3") == true)
            #expect(stored.type == "COMPOSITE")
        }
    }

    @Test(arguments: StorageServer.allCases)
    func noChecksumIsSentWhenTurnedOff(_ server: StorageServer) async throws {
        try await StorageTests.withStorage(
            server,
            configure: {
                $0.sendsChecksums = false
                $0.multipartThreshold = 5 << 20
                $0.partSize = 5 << 20
            }
        ) { storage, _ in
            try await storage.createBucket("plain")
            try await storage.upload("plain", "small.txt", Data("123456789".utf8))
            #expect(try await Self.storedChecksum(storage, "plain", "small.txt").crc == nil)
            let directory = try TemporaryFiles()
            let source = directory.url("parts.bin")
            try StorageTests.bytes((6 << 20) + 1, seed: 5).write(to: source)
            try await storage.upload("plain", "parts.bin", file: source)
            // Without a declared algorithm moto makes a full-object checksum of its own (CRC64NVME), not CRC-32.
            #expect(try await Self.storedChecksum(storage, "plain", "parts.bin").crc == nil)
            #expect(try await storage.info("plain", "parts.bin")?.size == (6 << 20) + 1)
        }
    }
}
