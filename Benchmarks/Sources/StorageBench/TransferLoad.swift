import AsyncHTTPClient
import BenchKit
import Foundation
import GQLServices

/// Upload and download of one large file against moto's S3 server: GQLStorage vs boto3's transfer manager, with a
/// raw unsigned GET of the same object as the server's own limit, and the memory GQLStorage's download adds.
struct TransferLoad {
    let options: StorageBench.Options

    /// The peer's READY line.
    struct PeerInfo: Decodable {
        var port: Int
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storagebench-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = options.megabytes << 20
        let source = directory.appendingPathComponent("source.bin")
        try Self.write(size: size, to: source)
        let expected = try Self.fingerprint(source)

        let peer = try S3Peer()
        defer { peer.stop() }
        let url = "http://127.0.0.1:\(peer.port)"
        var configuration = GQLStorage.Configuration()
        if let parts = options.parts { configuration.maximumConcurrentParts = parts }
        configuration.sendsChecksums = options.checksums
        let storage = GQLStorage(
            endpoint: url, region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key",
            configuration: configuration)
        try await storage.createBucket("bench")

        var uploads = Rounds()
        var downloads = Rounds()
        var raw: [Double] = []
        var peaks: [Double] = []
        let megabytes = Double(size) / 1_048_576
        for round in 0...options.rounds {
            // Uploads to different keys, both read back and compared; who goes first alternates by round, since the
            // server frees the previous round's object while the first upload runs.
            var ourUpload = 0.0
            var theirUpload = 0.0
            for turn in round.isMultiple(of: 2) ? [0, 1] : [1, 0] {
                // The previous round's downloads left 512 MiB of dirty pages (and moto's part files more): written
                // back now, not by the kernel in the middle of whichever upload comes next.
                sync()
                if turn == 0 {
                    let started = ContinuousClock.now
                    let cpu = Self.cpuSeconds()
                    try await storage.upload("bench", "ours.bin", file: source)
                    let elapsed = (ContinuousClock.now - started).seconds
                    ourUpload = megabytes / elapsed
                    FileHandle.standardError.write(
                        Data(
                            String(
                                format: "GQLStorage upload: %.3f s, %.3f s of CPU\n", elapsed,
                                Self.cpuSeconds() - cpu
                            ).utf8))
                } else {
                    theirUpload =
                        try megabytes
                        / seconds(
                            Peers.run(
                                "Benchmarks/Server/s3_bench_peer.py",
                                ["upload", url, source.path, "bench", "boto3.bin"]))
                }
            }
            for key in ["ours.bin", "boto3.bin"] {
                guard let info = try await storage.info("bench", key), info.size == size else {
                    throw BenchError("\(key) was not stored whole")
                }
            }
            // Downloads of the same object, each into its own file, checked against the source.
            let ours = directory.appendingPathComponent("ours-back.bin")
            let sampler = MemorySampler()
            var started = ContinuousClock.now
            try await storage.download("bench", "ours.bin", to: ours)
            let ourDownload = megabytes / (ContinuousClock.now - started).seconds
            let peak = sampler.stop()
            let theirs = directory.appendingPathComponent("boto3-back.bin")
            let theirDownload =
                try megabytes
                / seconds(
                    Peers.run(
                        "Benchmarks/Server/s3_bench_peer.py", ["download", url, "bench", "ours.bin", theirs.path]))
            for file in [ours, theirs] where try Self.fingerprint(file) != expected {
                throw BenchError("\(file.lastPathComponent) differs from the source")
            }
            // The server's limit: the same object, unsigned, unchecked, discarded.
            started = ContinuousClock.now
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "\(url)/bench/ours.bin"), timeout: .seconds(600))
            var received = 0
            for try await chunk in response.body { received += chunk.readableBytes }
            guard received == size else { throw BenchError("the raw GET received \(received) of \(size) bytes") }
            let rawDownload = megabytes / (ContinuousClock.now - started).seconds
            guard round > 0 else { continue }
            uploads.ours.append(ourUpload)
            uploads.theirs.append(theirUpload)
            downloads.ours.append(ourDownload)
            downloads.theirs.append(theirDownload)
            raw.append(rawDownload)
            peaks.append(peak)
        }
        try await storage.shutdown()
        print("")
        print(
            "\(options.megabytes) MiB file against moto's S3 server (no auth), files compared with the source"
                + (options.checksums ? "" : "; GQLStorage without CRC-32 checksums"))
        print("workload                               GQLStorage               boto3    ratio")
        print(uploads.line("upload (multipart)", unit: "MiB/s", target: 1))
        print(downloads.line("download to a file", unit: "MiB/s", target: 1))
        print(
            String(format: "server limit: raw unsigned GET of the same object  %.1f MiB/s", Statistics.median(raw) ?? 0)
        )
        print(
            String(
                format:
                    "memory the streamed download added (peak RSS − RSS before)  %.1f MiB (max of rounds %.1f)  goal < 64 MiB %@",
                Statistics.median(peaks) ?? 0, peaks.max() ?? 0, (peaks.max() ?? 0) < 64 ? "✔" : "✘"))
    }

    private func seconds(_ text: String) throws -> Double {
        guard let value = Double(text), value > 0 else { throw BenchError("boto3's peer answered '\(text)'") }
        return value
    }

    /// The CPU time (user and system) this process has used, in seconds.
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// A file of `size` pseudo-random bytes, written a MiB at a time.
    static func write(size: Int, to url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var state: UInt64 = 0x5EED
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, 1 << 20)
            var chunk = [UInt8](repeating: 0, count: count)
            for index in 0..<count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                chunk[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
            try handle.write(contentsOf: chunk)
            remaining -= count
        }
    }

    /// A 64-bit FNV-1a of a file, read a MiB at a time.
    static func fingerprint(_ url: URL) throws -> UInt64 {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            for byte in chunk {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return hash
    }
}

/// Samples this process's resident memory every 5 ms on a thread of its own; `stop()` returns the peak above the
/// RSS at the start, in MiB.
final class MemorySampler: @unchecked Sendable {
    // Safety: `peak` and `running` are touched only with `lock` held.
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private let start: Int
    private let thread: Thread?

    init() {
        start = Self.rss()
        let box = Box()
        thread = Thread { box.sampler?.loop() }
        box.sampler = self
        thread?.start()
    }

    private final class Box: @unchecked Sendable { weak var sampler: MemorySampler? }

    private func loop() {
        while true {
            let now = Self.rss()
            lock.lock()
            peak = max(peak, now)
            let go = running
            lock.unlock()
            if !go { return }
            usleep(5_000)
        }
    }

    func stop() -> Double {
        lock.lock()
        running = false
        let top = max(peak, Self.rss())
        lock.unlock()
        return Double(max(top - start, 0)) / 1_048_576
    }

    /// VmRSS from /proc/self/status, in bytes.
    static func rss() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return digits * 1024
        }
        return 0
    }
}

/// moto's S3 server without authentication (Tests/Interop/s3_peer.py --no-auth), stopped by closing its input.
final class S3Peer {
    let port: Int
    private let process: Process
    private let input: Pipe

    init() throws {
        process = Process()
        process.executableURL = Peers.python
        process.arguments = [Peers.root.appendingPathComponent("Tests/Interop/s3_peer.py").path, "--no-auth"]
        let output = Pipe()
        input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "),
            let info = try? JSONDecoder().decode(TransferLoad.PeerInfo.self, from: Data(text.dropFirst(6).utf8))
        else { throw BenchError("the S3 peer did not start: \(text)") }
        port = info.port
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
