import BenchKit
import Foundation
import GQLServices

/// Upload and download of one large file: GQLStorage against boto3's transfer manager, each server's raw limit
/// (curl) beside them, and the memory GQLStorage's streamed download adds (in a fresh process).
///
/// Uploads go to moto (Tests/Interop/s3_peer.py --no-auth) and to the project's storage emulator (GQLStorageEmulator
/// in a child process, signatures checked): GQLStorage's `upload` at its defaults and tuned (`--tuned-part-mib`,
/// `--tuned-parts`: the fastest of UploadGrid's grid against the emulator), boto3's `upload_file` with the default
/// TransferConfig and tuned (32 MiB parts, 4 threads: Benchmarks/Server/s3_bench_peer.py) and, as the limit, curl
/// sending the file in one PUT of a presigned URL. Every uploaded object is read back and compared with the source
/// (GQLStorage's default one through the timed downloads, the others by an untimed download after each round's
/// uploads). Downloads come from three servers: moto, which builds the whole object for every GET
/// (so a ranged GET costs it a whole object), nginx serving the same file from the disk, and the emulator, both of
/// which serve ranges natively; from each, GQLStorage's `download` (one streamed GET), boto3's `download_file` with its default
/// TransferConfig (ranged GETs of 8 MiB, 10 at a time) and with a TransferConfig whose multipart threshold is above
/// the object (one GET, boto3 at its best on moto), and curl of the same URL (presigned on moto and the emulator) into
/// /dev/null, the limit (its length checked). The emulator's peak resident memory over the run is reported beside.
/// Every downloaded file is compared with the source. In every round each group of contenders takes turns,
/// the first of the previous round moving to the end, and `sync(2)` runs before each timed transfer, so that
/// writing back an earlier one's file cannot fall into it. Each upload's CPU seconds in the server's process (moto's,
/// the emulator's; from /proc) are reported beside the rates, medians per uploader.
struct TransferLoad {
    let options: StorageBench.Options
    static let bucket = "bench"

    enum Uploader: String, CaseIterable {
        case gqlstorage, gqlstorageTuned, boto3, boto3Tuned, curl
    }

    enum Downloader: String, CaseIterable {
        case gqlstorage, boto3, boto3OneGet, curl
    }

    /// A server downloads come from: its name, the GQLStorage that talks to it and the URL curl fetches; for a
    /// server uploads go to, also the tuned GQLStorage.
    struct Source {
        var name: String
        var endpoint: String
        var storage: GQLStorage
        var curlURL: String
        var tuned: GQLStorage?
        /// The server's process (moto's, the emulator's), whose CPU seconds each upload to it costs are reported.
        var process: S3Peer?
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
        let moto = "http://127.0.0.1:\(peer.port)"
        var configuration = GQLStorage.Configuration()
        if let parts = options.parts { configuration.maximumConcurrentParts = parts }
        configuration.sendsChecksums = options.checksums
        var tunedConfiguration = configuration
        tunedConfiguration.partSize = options.tunedPartMiB << 20
        tunedConfiguration.maximumConcurrentParts = options.tunedParts
        func client(_ endpoint: String, _ configuration: GQLStorage.Configuration) -> GQLStorage {
            GQLStorage(
                endpoint: endpoint, region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key",
                configuration: configuration)
        }
        let storage = client(moto, configuration)
        try await storage.createBucket(Self.bucket)
        var sources = [
            Source(
                name: "moto", endpoint: moto, storage: storage,
                curlURL: try storage.presignedURL(.get, Self.bucket, "ours.bin", expires: .seconds(3600))
                    .absoluteString,
                tuned: client(moto, tunedConfiguration), process: peer)
        ]
        var uploadTargets = sources
        var emulator: S3Peer?
        defer { emulator?.stop() }
        var fileServer: FileServer?
        defer { fileServer?.stop() }
        if options.nginx {
            let nginxDirectory = directory.appendingPathComponent("nginx")
            try FileManager.default.createDirectory(at: nginxDirectory, withIntermediateDirectories: true)
            let server = try await FileServer(
                directory: nginxDirectory, file: source, bucket: Self.bucket, key: "ours.bin")
            fileServer = server
            let endpoint = "http://127.0.0.1:\(server.port)"
            sources.append(
                Source(
                    name: "nginx", endpoint: endpoint,
                    storage: GQLStorage(
                        endpoint: endpoint, region: "us-east-1", accessKey: "AKIDBENCHMARK",
                        secretKey: "bench/secret+key"),
                    curlURL: "\(endpoint)/\(Self.bucket)/ours.bin"))
        }
        if options.emulator {
            let peer = try S3Peer.emulator(directory: directory.appendingPathComponent("emulator"))
            emulator = peer
            let endpoint = "http://127.0.0.1:\(peer.port)"
            let emulatorStorage = client(endpoint, configuration)
            try await emulatorStorage.createBucket(Self.bucket)
            let target = Source(
                name: "emulator", endpoint: endpoint, storage: emulatorStorage,
                curlURL: try emulatorStorage.presignedURL(.get, Self.bucket, "ours.bin", expires: .seconds(3600))
                    .absoluteString,
                tuned: client(endpoint, tunedConfiguration), process: peer)
            uploadTargets.append(target)
            sources.append(target)
        }

        let megabytes = Double(size) / 1_048_576
        var uploads: [String: [Uploader: [Double]]] = [:]
        var serverCPU: [String: [Uploader: [Double]]] = [:]
        var downloads: [String: [Downloader: [Double]]] = [:]
        var memory: [MemoryProbe.Result] = []
        for round in 0...options.rounds {
            var uploaded: [String: [Uploader: Double]] = [:]
            var uploadCPU: [String: [Uploader: Double]] = [:]
            for target in uploadTargets {
                for uploader in Self.rotated(Uploader.allCases, by: round) {
                    // Untimed: the last round's object goes first, so an upload that stores nothing is not hidden
                    // by it in the read-back and the downloads below.
                    try await target.storage.delete(Self.bucket, Self.key(uploader))
                    sync()
                    let cpu = target.process?.cpuSeconds
                    uploaded[target.name, default: [:]][uploader] =
                        megabytes / (try await upload(uploader, target, source))
                    if let cpu, let after = target.process?.cpuSeconds {
                        uploadCPU[target.name, default: [:]][uploader] = after - cpu
                        Self.note(String(format: "  %@'s CPU for it: %.3f s", target.name, after - cpu))
                    }
                }
                // Every upload read back and compared with the source, untimed (GQLStorage's default one through
                // the downloads below).
                for uploader in Uploader.allCases where uploader != .gqlstorage {
                    let readBack = directory.appendingPathComponent("read-back.bin")
                    try await target.storage.download(Self.bucket, Self.key(uploader), to: readBack)
                    guard try Self.fingerprint(readBack) == expected else {
                        throw BenchError("\(uploader.rawValue)'s upload to \(target.name) differs from the source")
                    }
                    try FileManager.default.removeItem(at: readBack)
                }
            }
            var downloaded: [String: [Downloader: Double]] = [:]
            for server in sources {
                for downloader in Self.rotated(Downloader.allCases, by: round) {
                    let file = directory.appendingPathComponent("\(server.name)-\(downloader.rawValue).bin")
                    sync()
                    downloaded[server.name, default: [:]][downloader] =
                        megabytes / (try await download(downloader, server, to: file))
                    if downloader != .curl {
                        guard try Self.fingerprint(file) == expected else {
                            throw BenchError("\(downloader.rawValue)'s download from \(server.name) differs")
                        }
                        try FileManager.default.removeItem(at: file)
                    }
                }
            }
            let probeFile = directory.appendingPathComponent("memory-child.bin")
            let probe = try MemoryProbe.measure(
                endpoint: sources[0].endpoint, bucket: Self.bucket, key: "ours.bin", to: probeFile,
                expected: expected)
            try FileManager.default.removeItem(at: probeFile)
            guard round > 0 else { continue }  // warm-up
            for (server, rates) in uploaded {
                for (uploader, rate) in rates { uploads[server, default: [:]][uploader, default: []].append(rate) }
            }
            for (server, seconds) in uploadCPU {
                for (uploader, cpu) in seconds { serverCPU[server, default: [:]][uploader, default: []].append(cpu) }
            }
            for (server, rates) in downloaded {
                for (downloader, rate) in rates {
                    downloads[server, default: [:]][downloader, default: []].append(rate)
                }
            }
            memory.append(probe)
        }
        try await storage.shutdown()
        for server in sources where server.name != "moto" { try await server.storage.shutdown() }
        for server in sources { try await server.tuned?.shutdown() }
        report(
            uploads: uploads, serverCPU: serverCPU, downloads: downloads, memory: memory, sources: sources,
            nginx: fileServer?.version, emulatorPeak: emulator?.peakResidentMiB)
    }

    /// The key each uploader's object is stored under.
    static func key(_ uploader: Uploader) -> String {
        switch uploader {
        case .gqlstorage: "ours.bin"
        case .gqlstorageTuned: "ours-tuned.bin"
        case .boto3: "boto3.bin"
        case .boto3Tuned: "boto3-tuned.bin"
        case .curl: "curl.bin"
        }
    }

    /// One timed upload of `source` to `target`; its seconds.
    private func upload(_ uploader: Uploader, _ target: Source, _ source: URL) async throws -> Double {
        let key = Self.key(uploader)
        switch uploader {
        case .gqlstorage, .gqlstorageTuned:
            let tuned = uploader == .gqlstorageTuned
            guard let storage = tuned ? target.tuned : target.storage else {
                throw BenchError("no tuned GQLStorage for \(target.name)")
            }
            let started = ContinuousClock.now
            let cpu = Self.cpuSeconds()
            try await storage.upload(Self.bucket, key, file: source)
            let elapsed = (ContinuousClock.now - started).seconds
            Self.note(
                String(
                    format: "GQLStorage%@ upload to %@: %.3f s, %.3f s of CPU", tuned ? " tuned" : "", target.name,
                    elapsed, Self.cpuSeconds() - cpu))
            return elapsed
        case .boto3, .boto3Tuned:
            return try seconds(
                Peers.run(
                    "Benchmarks/Server/s3_bench_peer.py",
                    ["upload", target.endpoint, source.path, Self.bucket, key]
                        + (uploader == .boto3Tuned ? ["tuned"] : [])))
        case .curl:
            let url = try target.storage.presignedURL(.put, Self.bucket, key, expires: .seconds(3600))
            let elapsed = try Self.curl(["-T", source.path, url.absoluteString]).seconds
            Self.note(String(format: "curl upload (one PUT) to %@: %.3f s", target.name, elapsed))
            return elapsed
        }
    }

    /// One timed download of the object from `server` into `file`; its seconds.
    private func download(_ downloader: Downloader, _ server: Source, to file: URL) async throws -> Double {
        let elapsed: Double
        switch downloader {
        case .gqlstorage:
            let started = ContinuousClock.now
            try await server.storage.download(Self.bucket, "ours.bin", to: file)
            elapsed = (ContinuousClock.now - started).seconds
        case .boto3, .boto3OneGet:
            var arguments = ["download", server.endpoint, Self.bucket, "ours.bin", file.path]
            if downloader == .boto3OneGet { arguments.append("one-get") }
            elapsed = try seconds(Peers.run("Benchmarks/Server/s3_bench_peer.py", arguments))
        case .curl:
            // Into /dev/null, so that the limit writes nothing; its answer checked by its length (the bytes are
            // not kept to compare).
            let (seconds, bytes) = try Self.curl(["-o", "/dev/null", server.curlURL])
            guard bytes == options.megabytes << 20 else {
                throw BenchError("curl's download from \(server.name) got \(bytes) bytes")
            }
            elapsed = seconds
        }
        Self.note(String(format: "%@ download from %@: %.3f s", downloader.rawValue, server.name, elapsed))
        return elapsed
    }

    private func report(
        uploads: [String: [Uploader: [Double]]], serverCPU: [String: [Uploader: [Double]]],
        downloads: [String: [Downloader: [Double]]], memory: [MemoryProbe.Result], sources: [Source], nginx: String?,
        emulatorPeak: Double?
    ) {
        func named(_ server: Source) -> String {
            switch server.name {
            case "nginx": "\(nginx ?? "nginx") serving the same file"
            case "emulator": "the storage emulator (GQLStorageEmulator, signatures checked)"
            default: "moto"
            }
        }
        print("")
        print(
            "\(options.megabytes) MiB file; uploads to moto's S3 server (no auth)"
                + (options.emulator ? " and the storage emulator" : "") + ", downloads from "
                + sources.map(named).joined(separator: ", ")
                + "; every download compared with the source (curl's, the limit, by its length), every upload"
                + " (curl's too) read back and compared"
                + "; GQLStorage tuned: \(options.tunedPartMiB) MiB parts, \(options.tunedParts) at a time"
                + (options.checksums ? "" : "; GQLStorage without CRC-32 checksums"))
        print("workload" + String(repeating: " ", count: 48) + "GQLStorage               boto3    ratio")
        for server in sources where uploads[server.name] != nil {
            let rates = uploads[server.name] ?? [:]
            let ours = rates[.gqlstorage] ?? []
            print(
                Rounds(ours: ours, theirs: rates[.boto3] ?? [])
                    .line("upload (multipart) to \(server.name)", unit: "MiB/s", target: 1))
            print(
                Rounds(ours: ours, theirs: rates[.boto3Tuned] ?? [])
                    .line("upload to \(server.name), boto3 tuned", unit: "MiB/s", target: 1))
            let tuned = rates[.gqlstorageTuned] ?? []
            print(
                Rounds(ours: tuned, theirs: rates[.boto3Tuned] ?? [])
                    .line("upload to \(server.name), both tuned", unit: "MiB/s", target: 1))
            print(
                Rounds(ours: tuned, theirs: rates[.boto3] ?? [])
                    .line("upload to \(server.name), GQLStorage tuned, boto3 default", unit: "MiB/s", target: 1))
            print(Self.limit("\(server.name): upload limit, curl one PUT (presigned)", rates[.curl] ?? [], ours))
            print(Self.limit("\(server.name): the same limit, GQLStorage tuned", rates[.curl] ?? [], tuned))
            if let seconds = serverCPU[server.name] {
                print(
                    "\(server.name)'s CPU seconds per upload (medians): "
                        + Uploader.allCases.map {
                            String(format: "%@ %.3f", $0.rawValue, Statistics.median(seconds[$0] ?? []) ?? 0)
                        }.joined(separator: ", "))
            }
        }
        for server in sources {
            let rates = downloads[server.name] ?? [:]
            let ours = rates[.gqlstorage] ?? []
            print(
                Rounds(ours: ours, theirs: rates[.boto3] ?? [])
                    .line("\(server.name): download, boto3 default", unit: "MiB/s", target: 1))
            print(
                Rounds(ours: ours, theirs: rates[.boto3OneGet] ?? [])
                    .line("\(server.name): download, boto3 one GET", unit: "MiB/s", target: 1))
            let limit = server.name == "nginx" ? "curl GET" : "curl GET of a presigned URL"
            print(Self.limit("\(server.name): download limit, \(limit)", rates[.curl] ?? [], ours))
        }
        let added = memory.map(\.added)
        print(
            String(
                format:
                    "memory the streamed download added, a fresh process (VmHWM − VmRSS before)  %.1f MiB (max of rounds %.1f; baseline %.1f MiB)  goal < 64 MiB %@",
                Statistics.median(added) ?? 0, added.max() ?? 0, Statistics.median(memory.map(\.baseline)) ?? 0,
                (added.max() ?? 0) < 64 ? "✔" : "✘"))
        if let emulatorPeak {
            print(
                String(
                    format: "the storage emulator's peak resident memory over the whole run (VmHWM)  %.1f MiB",
                    emulatorPeak))
        }
    }

    /// `label  median MiB/s  GQLStorage's share of it`.
    static func limit(_ label: String, _ rates: [Double], _ ours: [Double]) -> String {
        label.padding(toLength: 52, withPad: " ", startingAt: 0)
            + String(format: "%10.1f MiB/s", Statistics.median(rates) ?? 0) + "  GQLStorage ÷ limit "
            + Statistics.spread(Statistics.ratios(ours, rates))
    }

    /// The contenders in this round's order: the first of the previous round moves to the end.
    static func rotated<T>(_ all: [T], by round: Int) -> [T] {
        let shift = round % all.count
        return Array(all[shift...] + all[..<shift])
    }

    /// Runs curl with `arguments` (silent, failing on an HTTP error, no `Expect: 100-continue`) and returns its
    /// `time_total` in seconds and the bytes it downloaded.
    static func curl(_ arguments: [String]) throws -> (seconds: Double, downloaded: Int) {
        let (status, output) = try Peers.capture(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-sS", "--fail", "-H", "Expect:", "-w", "%{time_total} %{size_download}"] + arguments)
        let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = text.split(separator: " ")
        guard status == 0, fields.count == 2, let value = Double(fields[0]), value > 0, let bytes = Int(fields[1])
        else {
            throw BenchError("curl \(arguments.first ?? "") failed: '\(text)'")
        }
        return (value, bytes)
    }

    /// One line on standard error (each transfer's time; the table goes to standard output).
    static func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
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
