import Foundation
import GQLCore
import Testing

/// The storage emulator of `gql-cli serve` streams objects to and from disk: a 64 MiB object up and down through a
/// child process grows its peak resident memory by far less than the object. (Benchmarks/emulator-memory.sh
/// measures the same for 1 GiB; too slow for CI.)
@Suite("gql-cli serve storage memory")
struct ServeStorageMemoryTests {
    @Test func a64MiBObjectUpAndDownKeepsTheEmulatorsMemoryFlat() async throws {
        let scratch = try TemporaryDirectory()
        let server = try BackgroundCLIProcess([
            "serve", "--storage", "--storage-port", "0", "--storage-bucket", "flat", "--data", scratch.path("data"),
            "--endpoints-file", scratch.path("endpoints.json"),
        ])
        var endpoints: GQLValue?
        for _ in 0..<300 where endpoints == nil {
            endpoints = (try? Data(contentsOf: URL(fileURLWithPath: scratch.path("endpoints.json"))))
                .flatMap { try? GQLValue(json: $0) }
            if endpoints == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let storage = try #require(endpoints?["storage"]?.stringValue, "no endpoints; stderr: \(server.stderr)")
        let flags = [
            "--endpoint", storage, "--access-key", try #require(endpoints?["storageAccessKey"]?.stringValue),
            "--secret-key", try #require(endpoints?["storageSecretKey"]?.stringValue),
        ]
        // Warm up with a small object (the server's buffers and first connection exist), then read the baseline.
        let small = URL(fileURLWithPath: scratch.path("small.bin"))
        try Data(repeating: 7, count: 100_000).write(to: small)
        _ = try await CLIProcess.succeed(["storage", "upload", small.path, "s3://flat/small.bin"] + flags)
        _ = try await CLIProcess.succeed(
            ["storage", "download", "flat/small.bin", scratch.path("small-back.bin")] + flags)
        let baseline = try #require(server.peakResidentBytes)

        let size = 64 << 20
        let big = URL(fileURLWithPath: scratch.path("big.bin"))
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        var bytes = Data(capacity: size)
        for round in 0..<(size >> 20) {  // each MiB the block turned by `round` bytes: no two alike
            bytes.append(block.dropFirst(round))
            bytes.append(block.prefix(round))
        }
        try bytes.write(to: big)
        _ = try await CLIProcess.succeed(["storage", "upload", big.path, "s3://flat/big.bin"] + flags)
        _ = try await CLIProcess.succeed(["storage", "download", "flat/big.bin", scratch.path("big-back.bin")] + flags)
        let peak = try #require(server.peakResidentBytes)
        #expect(FileManager.default.contentsEqual(atPath: big.path, andPath: scratch.path("big-back.bin")))
        // A server that held the object would grow by 64 MiB or more; the emulator keeps a write buffer (1 MiB)
        // and the event loop's buffers per transfer: 17–26 MiB here in a debug build (allocator arenas of the
        // threads included), 29 MiB for 1 GiB (Benchmarks/emulator-memory.sh).
        let grown = peak - baseline
        #expect(grown < 48 << 20, "the emulator's peak grew by \(grown >> 20) MiB for a 64 MiB object")
        server.send(SIGTERM)
        _ = try await server.wait()
    }
}
