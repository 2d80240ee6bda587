import AsyncHTTPClient
import BenchKit
import Foundation
import GQLServices

/// The memory GQLStorage's streamed download adds, measured in a fresh process: StorageBench runs itself again with
/// `--memory-child`, which makes a GQLStorage, asks the server for the object's size (so that the client, its event
/// loop and its connection exist), reads its resident memory (VmRSS, the baseline), downloads the object to a file
/// and reads its peak resident memory (VmHWM, over the process's whole life). Added = peak − baseline; since the peak
/// also covers everything before the baseline, the figure can only err high.
enum MemoryProbe {
    struct Result {
        var baseline: Double
        var peak: Double
        var added: Double { max(peak - baseline, 0) }
    }

    /// Runs the child against `endpoint` and returns its baseline and peak, in MiB, after checking its file.
    static func measure(endpoint: String, bucket: String, key: String, to file: URL, expected: UInt64) throws -> Result
    {
        let (status, output) = try Peers.capture(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            ["--memory-child", endpoint, bucket, key, file.path])
        let numbers = output.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard status == 0, numbers.count == 2 else { throw BenchError("the memory child failed: \(output)") }
        guard try TransferLoad.fingerprint(file) == expected else {
            throw BenchError("the memory child's download differs from the source")
        }
        return Result(baseline: numbers[0] / 1_048_576, peak: numbers[1] / 1_048_576)
    }

    /// The child's side: prints `baseline peak` in bytes.
    static func child(_ arguments: [String]) async throws {
        guard arguments.count == 4 else { throw BenchError("usage: --memory-child ENDPOINT BUCKET KEY FILE") }
        let storage = GQLStorage(
            endpoint: arguments[0], region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key")
        guard try await storage.info(arguments[1], arguments[2]) != nil else {
            throw BenchError("\(arguments[1])/\(arguments[2]) is not on the server")
        }
        let baseline = status("VmRSS:")
        try await storage.download(arguments[1], arguments[2], to: URL(fileURLWithPath: arguments[3]))
        let peak = status("VmHWM:")
        try await storage.shutdown()
        guard baseline > 0, peak > 0 else { throw BenchError("/proc/self/status has no VmRSS or VmHWM") }
        print(baseline, peak)
    }

    /// `--download-child ENDPOINT BUCKET KEY FILE ROUNDS [gqlstorage|drain|write]`: downloads the object ROUNDS
    /// times, each into a new file with `sync(2)` before it, and prints each download's seconds and CPU seconds, one
    /// round a line; what Benchmarks/profile-storage.sh samples with perf. `gqlstorage` (the default): GQLStorage's
    /// `download(_:_:to:)` into FILE. The floors under it, AsyncHTTPClient alone with one GET of the same URL (not
    /// signed: for nginx): `drain` reads the streamed body and drops it, `write` writes each chunk to FILE.
    static func downloads(_ arguments: [String]) async throws {
        guard arguments.count == 5 || arguments.count == 6, let rounds = Int(arguments[4]), rounds > 0,
            ["gqlstorage", "drain", "write"].contains(arguments.count == 6 ? arguments[5] : "gqlstorage")
        else {
            throw BenchError("usage: --download-child ENDPOINT BUCKET KEY FILE ROUNDS [gqlstorage|drain|write]")
        }
        let mode = arguments.count == 6 ? arguments[5] : "gqlstorage"
        let storage = GQLStorage(
            endpoint: arguments[0], region: "us-east-1", accessKey: "AKIDBENCHMARK", secretKey: "bench/secret+key")
        let file = URL(fileURLWithPath: arguments[3])
        for _ in 0..<rounds {
            // As in StorageBench: a new file each time, nothing of the last one left to write back.
            try? FileManager.default.removeItem(at: file)
            sync()
            let started = ContinuousClock.now
            let cpu = TransferLoad.cpuSeconds()
            if mode == "gqlstorage" {
                try await storage.download(arguments[1], arguments[2], to: file)
            } else {
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "\(arguments[0])/\(arguments[1])/\(arguments[2])"), timeout: .seconds(60))
                let output = mode == "write" ? open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) : -1
                defer { if output >= 0 { close(output) } }
                for try await chunk in response.body where output >= 0 {
                    let written = chunk.withUnsafeReadableBytes { write(output, $0.baseAddress, $0.count) }
                    guard written == chunk.readableBytes else { throw BenchError("a short write to \(file.path)") }
                }
            }
            print(
                String(
                    format: "%@: %.3f s, %.3f s of CPU", mode, (ContinuousClock.now - started).seconds,
                    TransferLoad.cpuSeconds() - cpu))
        }
        try await storage.shutdown()
    }

    /// A `kB` field of /proc/self/status, in bytes.
    static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field) {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }
}
