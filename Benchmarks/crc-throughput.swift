// The throughput of GQLCrypto's CRCs on one core: CRC64NVME (S3's default checksum, which the storage emulator
// computes for every upload that sends no checksum) and CRC32, over the same seeded buffer in 1 MiB updates (the
// emulator's write buffer), best of several passes; each CRC checked against the catalogue's check value first (a
// 9-byte input: the one-chain path), and, untimed, its three-chain result over the large buffer against the
// one-chain result of the same bytes fed in pieces too small to be split.
// Not a package target (the CRCs are `package` API): compiled with the sources, optimized,
// Benchmarks/crc-throughput.sh.
import Foundation

@main
struct CRCThroughput {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        let megabytes = arguments.first.flatMap { Int($0) } ?? 256
        let passes = arguments.dropFirst().first.flatMap { Int($0) } ?? 5
        guard CRC64NVME(Array("123456789".utf8)).value == 0xAE8B_1486_0A79_9888,
            CRC32(Array("123456789".utf8)).value == 0xCBF4_3926
        else {
            print("a CRC does not give the catalogue's check value")
            exit(1)
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var buffer = [UInt8](repeating: 0, count: megabytes << 20)
        for index in buffer.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            buffer[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        let chunk = 1 << 20
        // Pieces under 3 × 4,096 bytes go through one chain only (ReflectedCRC.update).
        let small = 8 << 10
        var crc64Chains = CRC64NVME(), crc64Chain = CRC64NVME(), crc32Chains = CRC32(), crc32Chain = CRC32()
        for offset in stride(from: 0, to: buffer.count, by: chunk) {
            crc64Update(&crc64Chains, buffer[offset..<min(offset + chunk, buffer.count)])
            crc32Update(&crc32Chains, buffer[offset..<min(offset + chunk, buffer.count)])
        }
        for offset in stride(from: 0, to: buffer.count, by: small) {
            crc64Update(&crc64Chain, buffer[offset..<min(offset + small, buffer.count)])
            crc32Update(&crc32Chain, buffer[offset..<min(offset + small, buffer.count)])
        }
        guard crc64Chains == crc64Chain, crc32Chains.value == crc32Chain.value else {
            print("a CRC's three chains do not give its one chain's result over \(megabytes) MiB")
            exit(1)
        }
        func measure(_ name: String, _ pass: () -> String) {
            var best = Double.infinity
            var result = ""
            for _ in 0..<passes {
                let start = DispatchTime.now().uptimeNanoseconds
                result = pass()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            let rate = Double(buffer.count) / best / 1e6
            print(
                String(
                    format: "%@: %.0f MB/s (%.3f s for %d MiB, best of %d passes; %@)", name, rate, best,
                    megabytes, passes, result))
        }
        measure("CRC64NVME") {
            var crc = CRC64NVME()
            for offset in stride(from: 0, to: buffer.count, by: chunk) {
                crc64Update(&crc, buffer[offset..<min(offset + chunk, buffer.count)])
            }
            return crc.base64
        }
        measure("CRC32") {
            var crc = CRC32()
            for offset in stride(from: 0, to: buffer.count, by: chunk) {
                crc32Update(&crc, buffer[offset..<min(offset + chunk, buffer.count)])
            }
            return crc.base64
        }
    }

    @inline(never) static func crc64Update(_ crc: inout CRC64NVME, _ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { crc.update($0) }
    }

    @inline(never) static func crc32Update(_ crc: inout CRC32, _ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { crc.update($0) }
    }
}
