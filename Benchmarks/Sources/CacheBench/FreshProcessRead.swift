import BenchKit
import Foundation
import GQLCache
import GQLCore

/// A relaunched app's first read: CacheBench runs itself again with `--fresh-child read|parse CACHE ANSWER POSTS`,
/// and the child times one operation, the first of its life: `read`, opening a GQLCache on the cache file CACHE
/// (the database opened, the cache's migrations checked, the table looked at) and reading the feed's query from it,
/// what a relaunched app does before its first screen shows cached data (the cache's code, SQLite's and the
/// decoder's not yet run in the process); `parse`, parsing the network answer's bytes into `GQLValue` and taking
/// its `data`, as GQLServer does with an answer it received (the bytes are read from ANSWER before the clock
/// starts: an app has them from the network), the same first time for the parser. Each prints its seconds; the
/// read's answer is checked against the parse of the answer's bytes, member for member in order, after the clock
/// stops.
enum FreshProcessRead {
    /// Runs one child and returns its seconds.
    static func measure(_ what: String, cache: String, answer: String, posts: Int) throws -> Double {
        let (status, output) = try Peers.capture(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            ["--fresh-child", what, cache, answer, String(posts)])
        guard status == 0, let seconds = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError("the fresh \(what) child failed (status \(status)): \(output)")
        }
        return seconds
    }

    /// The child's side: prints the seconds of its one operation; throws when the answer is wrong.
    static func child(_ arguments: [String]) throws {
        guard arguments.count == 4, ["read", "parse"].contains(arguments[0]), let posts = Int(arguments[3]) else {
            throw BenchError("usage: --fresh-child read|parse CACHE ANSWER POSTS")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: arguments[2]))
        var answer: GQLValue = .null
        let seconds: Double
        if arguments[0] == "read" {
            seconds = try timed {
                let cache = try GQLCache(path: arguments[1])
                answer = try cache.read(Feed.query, ["first": posts])
            }
        } else {
            seconds = try timed { answer = try GQLValue(json: bytes)["data"] ?? .null }
        }
        // Member for member in order (CacheWorkloads.check): `==` would pass an answer with its fields reordered.
        guard answer != .null, let parsed = try GQLValue(json: bytes)["data"],
            try CacheWorkloads.serialized(answer) == CacheWorkloads.serialized(parsed)
        else {
            throw BenchError("the fresh \(arguments[0]) child's answer is not the feed, member for member in order")
        }
        print(seconds)
    }
}
