import BenchKit
import Foundation
import GQLCache
import GQLCore

/// The write, read and watch workloads on one feed.
struct CacheWorkloads {
    let feed: Feed
    let directory: URL
    let options: CacheBench.Options

    private var variables: [String: any GQLValueConvertible] { ["first": feed.posts] }

    /// A fresh file path for one contender's round.
    func file(_ name: String) -> String {
        directory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
    }

    /// The network answer's `data`, parsed from its bytes as GQLServer parses an answer.
    private func parse(_ bytes: Data) throws -> GQLValue {
        guard let data = try GQLValue(json: bytes)["data"] else { throw BenchError("the answer has no data") }
        return data
    }

    /// Throws unless `answer` is the parse's answer `expected` (``serialized(_:)``) member for member, in order:
    /// `GQLValue`'s `==` holds for objects whose members come in any order, so a read that put an answer's
    /// fields out of the selection's order would pass it (review L4).
    private func check(_ answer: GQLValue, _ what: String, against expected: [UInt8]) throws {
        guard try Self.serialized(answer) == expected else {
            throw BenchError("\(what) is not the answer that was written, member for member in order")
        }
    }

    /// `value`'s JSON bytes, its objects' members in their order.
    static func serialized(_ value: GQLValue) throws -> [UInt8] { Array(try value.jsonData()) }

    /// Write: parse + `cache.write` on a fresh cache file vs parse + rows by hand on a fresh file, taking turns.
    /// Read: from the written cache (warm), from a fresh GQLCache on its file (cold), and parsing the bytes.
    func writeAndRead(into table: inout ResultTable) throws {
        let bytes = Data(feed.bytes)
        var cacheWrites: [Double] = []
        var rawWrites: [Double] = []
        var warmReads: [Double] = []
        var coldReads: [Double] = []
        var parses: [Double] = []
        var freshReads: [Double] = []
        var freshParses: [Double] = []
        let answerPath = directory.appendingPathComponent("answer.json")
        try bytes.write(to: answerPath)
        // What every read is checked against: the parse's answer, serialized in its members' order, checked once
        // against the generator's own data (the ground truth), so a parser bug cannot pass as the expected answer.
        let parsed = try parse(bytes)
        let expected = try Self.serialized(parsed)
        guard parsed == feed.data, try expected == Self.serialized(feed.data) else {
            throw BenchError("the parsed answer is not the feed's data, member for member in order")
        }
        for round in 0...options.rounds {
            let measured = round > 0
            progress(measured ? "write/read: round \(round) of \(options.rounds)" : "write/read: warm-up round")
            // Write, alternating which goes first.
            var cachePath = ""
            var cache: GQLCache?
            let writeOrder = round % 2 == 0 ? ["cache", "raw"] : ["raw", "cache"]
            for contender in writeOrder {
                sync()
                if contender == "cache" {
                    cachePath = file("cache")
                    let fresh = try GQLCache(path: cachePath)
                    CallgrindSection.start("write.cache")
                    let time = try timed {
                        try fresh.write(Feed.query, variables, data: try parse(bytes))
                    }
                    CallgrindSection.stop("write.cache", operations: 1)
                    try check(
                        try fresh.read(Feed.query, variables), "the cache's answer after the write", against: expected)
                    if measured { cacheWrites.append(time) }
                    cache = fresh
                } else {
                    let writer = try RawFeedWriter(path: file("raw"))
                    CallgrindSection.start("write.raw")
                    let time = try timed { try writer.write(try parse(bytes)) }
                    CallgrindSection.stop("write.raw", operations: 1)
                    let counts = try writer.counts()
                    let expected = (
                        feed.recordCount - 1 - feed.posts * (1 + Feed.commentsPerPost), feed.posts,
                        feed.posts * Feed.commentsPerPost
                    )
                    guard counts == expected else {
                        throw BenchError("the rows by hand are \(counts), not \(expected)")
                    }
                    try writer.close()
                    if measured { rawWrites.append(time) }
                }
            }
            guard let cache else { continue }
            // Read, in a rotating order.
            let readers = ["warm", "cold", "parse", "fresh read", "fresh parse"]
            for offset in 0..<readers.count {
                let reader = readers[(round + offset) % readers.count]
                // Under callgrind (sections selected) a child cannot start from /proc/self/exe, and its counts
                // would not be the parent's: the fresh-process rows are left out.
                if reader.hasPrefix("fresh"), !CallgrindSection.selected.isEmpty { continue }
                var answer: GQLValue = .null
                let time: Double
                switch reader {
                case "warm":
                    CallgrindSection.start("read.warm")
                    time = try timed { answer = try cache.read(Feed.query, variables) }
                    CallgrindSection.stop("read.warm", operations: 1)
                    try check(answer, "the warm cache's answer", against: expected)
                    if measured { warmReads.append(time) }
                case "cold":
                    let cold = try GQLCache(path: cachePath)
                    CallgrindSection.start("read.cold")
                    time = try timed { answer = try cold.read(Feed.query, variables) }
                    CallgrindSection.stop("read.cold", operations: 1)
                    try check(answer, "the cold cache's answer", against: expected)
                    if measured { coldReads.append(time) }
                case "fresh read", "fresh parse":
                    let what = reader == "fresh read" ? "read" : "parse"
                    time = try FreshProcessRead.measure(
                        what, cache: cachePath, answer: answerPath.path, posts: feed.posts)
                    if measured, what == "read" { freshReads.append(time) }
                    if measured, what == "parse" { freshParses.append(time) }
                default:
                    CallgrindSection.start("read.parse")
                    time = try timed { answer = try parse(bytes) }
                    CallgrindSection.stop("read.parse", operations: 1)
                    try check(answer, "the parsed answer", against: expected)
                    if measured { parses.append(time) }
                }
            }
        }
        if options.only.contains("write") {
            table.add(
                "write (parse + normalize + commit)", cache: cacheWrites, peer: rawWrites,
                peerName: "parse + rows by hand", goal: 1.5)
        }
        if options.only.contains("read") {
            table.add("read, warm (memory layer)", cache: warmReads, peer: parses, peerName: "parse JSON", goal: 0.5)
            table.add(
                "read, cold (fresh GQLCache, SQLite)", cache: coldReads, peer: parses, peerName: "parse JSON",
                goal: 1.5)
            table.add(
                "open + read, cold in a fresh process", cache: freshReads, peer: freshParses,
                peerName: "parse JSON in a fresh process", goal: 1.5)
        }
    }
}
