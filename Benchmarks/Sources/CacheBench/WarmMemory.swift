import BenchKit
import Foundation
import GQLCache
import GQLCore

/// `--only memory`: how much of a warm read is waiting on memory rather than running instructions.
///
/// The warm read and the parse are each timed twice per round, the four in a rotating order: right after the same
/// operation ran untimed (what it touches is then in the processor's caches as far as they hold it: "hot"), and
/// right after 64 MiB (twice the machine's last-level cache) were written ("evicted": its data comes from
/// memory). The read's work is the same both times; only where its data is changes, so the difference is time
/// spent waiting for memory. Every answer is checked against the parse's, member for member in order.
struct WarmMemory {
    let feed: Feed
    let file: String
    let rounds: Int

    /// Bytes written to push everything else out of the caches.
    static let evictionBytes = 64 << 20

    func run() throws {
        let bytes = Data(feed.bytes)
        let variables: [String: any GQLValueConvertible] = ["first": feed.posts]
        let parse = { () throws -> GQLValue in
            guard let data = try GQLValue(json: bytes)["data"] else { throw BenchError("the answer has no data") }
            return data
        }
        let expected = try CacheWorkloads.serialized(try parse())
        let cache = try GQLCache(path: file)
        try cache.write(Feed.query, variables, data: try parse())
        var buffer = [UInt8](repeating: 0, count: Self.evictionBytes)
        var times: [String: [Double]] = [:]
        let cases = ["read hot", "read evicted", "parse hot", "parse evicted"]
        for round in 0...rounds {
            progress(round > 0 ? "memory: round \(round) of \(rounds)" : "memory: warm-up round")
            for offset in 0..<cases.count {
                let name = cases[(round + offset) % cases.count]
                let isRead = name.hasPrefix("read")
                let operation = { isRead ? try cache.read(Feed.query, variables) : try parse() }
                if name.hasSuffix("hot") {
                    _ = try operation()
                } else {
                    Self.evict(&buffer, round: round)
                }
                var answer: GQLValue = .null
                let time = try timed { answer = try operation() }
                guard try CacheWorkloads.serialized(answer) == expected else {
                    throw BenchError("\(name): not the answer that was written, member for member in order")
                }
                if round > 0 { times[name, default: []].append(time) }
            }
        }
        func median(_ name: String) -> Double { (Statistics.median(times[name] ?? []) ?? 0) * 1000 }
        func ratio(_ top: String, _ bottom: String) -> String {
            Statistics.spread(Statistics.ratios(times[top] ?? [], times[bottom] ?? []))
        }
        print(
            String(
                format: "read, warm:  hot %.2f ms, evicted %.2f ms; evicted ÷ hot ", median("read hot"),
                median("read evicted")) + ratio("read evicted", "read hot"))
        print(
            String(
                format: "parse:       hot %.2f ms, evicted %.2f ms; evicted ÷ hot ", median("parse hot"),
                median("parse evicted")) + ratio("parse evicted", "parse hot"))
        print(
            "read ÷ parse: both hot " + ratio("read hot", "parse hot") + ", both evicted "
                + ratio("read evicted", "parse evicted"))
        print("")
    }

    /// Writes every 64th byte of `buffer` (a value that changes each round, so no write is skipped) and reads
    /// them back.
    static func evict(_ buffer: inout [UInt8], round: Int) {
        let value = UInt8(truncatingIfNeeded: round &+ 1)
        var sum = 0
        buffer.withUnsafeMutableBufferPointer { bytes in
            for index in stride(from: 0, to: bytes.count, by: 64) { bytes[index] = value }
            for index in stride(from: 0, to: bytes.count, by: 64) { sum &+= Int(bytes[index]) }
        }
        if sum == -1 { progress("unreachable") }
    }
}
