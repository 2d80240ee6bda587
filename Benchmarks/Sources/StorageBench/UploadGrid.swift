import BenchKit
import Foundation
import GQLServices

/// `StorageBench --only grid`: GQLStorage's upload of one file to the storage emulator at every part size and
/// concurrency of a small grid, to find its best (the tuned row of TransferLoad, beside boto3's tuned row).
///
/// The grid: parts of 8 (the default), 16, 32 and 64 MiB, with 2, 4 (the default) or 8 in flight at once; the same
/// knobs boto3's tuned row was picked from (Benchmarks/Server/s3_bench_peer.py). The emulator runs in a child process
/// as in TransferLoad. In every round each configuration uploads once, the first of the previous round moving to the
/// end, with `sync(2)` before each timed upload; every object is read back and compared with the source, untimed.
/// Beside each rate: GQLStorage's CPU seconds and the emulator's (read from /proc), which say whether the client's
/// work, the server's or neither (waiting: the emulator's `fsync`s) bounds a configuration.
struct UploadGrid {
    let options: StorageBench.Options
    static let partSizes = [8, 16, 32, 64]
    static let concurrencies = [2, 4, 8]

    struct Configuration: Hashable {
        var partMiB: Int
        var parts: Int
    }

    struct Sample {
        var rate: Double
        var clientCPU: Double
        var serverCPU: Double
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storagebench-grid-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = options.megabytes << 20
        let source = directory.appendingPathComponent("source.bin")
        try TransferLoad.write(size: size, to: source)
        let expected = try TransferLoad.fingerprint(source)

        let emulator = try S3Peer.emulator(directory: directory.appendingPathComponent("emulator"))
        defer { emulator.stop() }
        let endpoint = "http://127.0.0.1:\(emulator.port)"
        let grid = Self.partSizes.flatMap { partMiB in
            Self.concurrencies.map { Configuration(partMiB: partMiB, parts: $0) }
        }
        var clients: [Configuration: GQLStorage] = [:]
        for entry in grid {
            var configuration = GQLStorage.Configuration()
            configuration.partSize = entry.partMiB << 20
            configuration.maximumConcurrentParts = entry.parts
            configuration.sendsChecksums = options.checksums
            clients[entry] = GQLStorage(
                endpoint: endpoint, region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key",
                configuration: configuration)
        }
        let reader = GQLStorage(
            endpoint: endpoint, region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key")
        try await reader.createBucket(TransferLoad.bucket)

        let megabytes = Double(size) / 1_048_576
        var samples: [Configuration: [Sample]] = [:]
        for round in 0...options.rounds {
            for entry in TransferLoad.rotated(grid, by: round) {
                guard let storage = clients[entry] else { continue }
                let key = "grid-\(entry.partMiB)-\(entry.parts).bin"
                sync()
                let serverCPU = emulator.cpuSeconds ?? 0
                let clientCPU = TransferLoad.cpuSeconds()
                let started = ContinuousClock.now
                try await storage.upload(TransferLoad.bucket, key, file: source)
                let elapsed = (ContinuousClock.now - started).seconds
                let sample = Sample(
                    rate: megabytes / elapsed, clientCPU: TransferLoad.cpuSeconds() - clientCPU,
                    serverCPU: (emulator.cpuSeconds ?? 0) - serverCPU)
                TransferLoad.note(
                    String(
                        format: "grid %d MiB × %d: %.3f s, %.3f s of GQLStorage's CPU, %.3f s of the emulator's",
                        entry.partMiB, entry.parts, elapsed, sample.clientCPU, sample.serverCPU))
                let readBack = directory.appendingPathComponent("read-back.bin")
                try await reader.download(TransferLoad.bucket, key, to: readBack)
                guard try TransferLoad.fingerprint(readBack) == expected else {
                    throw BenchError("the upload with \(entry.partMiB) MiB parts, \(entry.parts) at a time, differs")
                }
                try FileManager.default.removeItem(at: readBack)
                try await reader.delete(TransferLoad.bucket, key)
                if round > 0 { samples[entry, default: []].append(sample) }  // round 0 warms up
            }
        }
        for storage in clients.values { try await storage.shutdown() }
        try await reader.shutdown()
        report(samples, grid: grid)
    }

    private func report(_ samples: [Configuration: [Sample]], grid: [Configuration]) {
        let baseline = samples[Configuration(partMiB: 8, parts: 4)]?.map(\.rate) ?? []
        print("")
        print(
            "GQLStorage's upload of \(options.megabytes) MiB to the storage emulator, \(options.rounds) rounds; "
                + "every object read back and compared with the source")
        print("parts            MiB/s (lowest–highest)   ÷ default (8 MiB × 4)   CPU s: GQLStorage  emulator")
        var best: (Configuration, Double)?
        for entry in grid {
            let rounds = samples[entry] ?? []
            let rates = rounds.map(\.rate)
            let median = Statistics.median(rates) ?? 0
            if median > best?.1 ?? 0 { best = (entry, median) }
            let label = "\(entry.partMiB) MiB × \(entry.parts)".padding(toLength: 14, withPad: " ", startingAt: 0)
            print(
                label
                    + String(
                        format: "%9.1f (%.1f–%.1f)", median, rates.min() ?? 0, rates.max() ?? 0)
                    + "   "
                    + Statistics.spread(Statistics.ratios(rates, baseline)).padding(
                        toLength: 22, withPad: " ", startingAt: 0)
                    + String(
                        format: "  %8.3f  %8.3f", Statistics.median(rounds.map(\.clientCPU)) ?? 0,
                        Statistics.median(rounds.map(\.serverCPU)) ?? 0))
        }
        if let (entry, rate) = best {
            print(
                String(
                    format: "fastest: %d MiB parts, %d at a time, %.1f MiB/s (StorageBench --tuned-part-mib %d "
                        + "--tuned-parts %d)", entry.partMiB, entry.parts, rate, entry.partMiB, entry.parts))
        }
    }
}
