import BenchKit
import Foundation
import GQLServices

/// SigV4 signatures per second: GQLStorage's presigned URLs vs botocore's query signer on the same keys.
struct SigningLoad {
    let options: StorageBench.Options
    static let seed: UInt64 = 42

    /// The keys s3_bench_peer.py generates for the same count and seed (the same linear congruential generator).
    static func keys(_ count: Int, seed: UInt64) -> [String] {
        let alphabet = Array("abcdefghij KLMNO 0123+!()*~-_./é")
        var state = seed
        func step() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        return (0..<count).map { index in
            let length = 8 + Int(step() % 24)
            let text = String((0..<length).map { _ in alphabet[Int((step() >> 33) % UInt64(alphabet.count))] })
            return "folder\(index % 10)/" + text
        }
    }

    func run() async throws {
        var configuration = GQLStorage.Configuration()
        let moment = Date(timeIntervalSince1970: 1_795_435_200)  // 2026-11-23T12:00:00Z, as the peer's
        configuration.now = { moment }
        let storage = GQLStorage(
            endpoint: "http://127.0.0.1:9000", region: "us-east-1", accessKey: "AKIDBENCHMARK",
            secretKey: "bench/secret+key", pathStyle: true, configuration: configuration)
        defer { Task { try? await storage.shutdown() } }
        let keys = Self.keys(options.signatures, seed: Self.seed)
        var rounds = Rounds()
        for round in 0...options.rounds {
            // Ours.
            var signatures: [Substring] = []
            signatures.reserveCapacity(keys.count)
            let started = ContinuousClock.now
            for key in keys {
                let url = try storage.presignedURL(.get, "bench-bucket", key, expires: .seconds(900)).absoluteString
                // The signature is the last parameter: everything after the last "=".
                guard let equals = url.utf8.lastIndex(of: UInt8(ascii: "=")) else {
                    throw BenchError("a presigned URL without a signature: \(url)")
                }
                signatures.append(url[url.utf8.index(after: equals)...])
            }
            let ours = Double(keys.count) / (ContinuousClock.now - started).seconds
            // botocore, same keys, same instant.
            let answer = try Peers.run(
                "Benchmarks/Server/s3_bench_peer.py", ["sign", String(keys.count), String(Self.seed)]
            ).split(separator: "\n")
            guard let first = answer.first, let seconds = Double(first) else {
                throw BenchError("botocore's peer answered \(answer.prefix(2))")
            }
            guard answer.dropFirst().elementsEqual(signatures) else {
                let index =
                    zip(answer.dropFirst(), signatures).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? -1
                throw BenchError("the signatures differ from botocore's, first at key \(index)")
            }
            let theirs = Double(keys.count) / seconds
            guard round > 0 else { continue }  // warm-up
            rounds.ours.append(ours)
            rounds.theirs.append(theirs)
        }
        print("")
        print("SigV4 presigned URLs, \(keys.count) keys a round, identical signatures checked every round")
        print("workload                               GQLStorage             botocore    ratio")
        print(rounds.line("signatures/s", unit: "/s", target: 20))
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
