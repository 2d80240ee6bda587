import BenchKit
import Foundation
import GQLCache
import GQLCore
import GQLNet
import Synchronization

/// What every watcher emitted: the author's name of each answer, and when the latest arrived.
final class Emissions: Sendable {
    private let state: Mutex<(names: [[String]], times: [ContinuousClock.Instant?])>

    init(count: Int) { state = Mutex((Array(repeating: [], count: count), Array(repeating: nil, count: count))) }

    func record(_ watcher: Int, _ name: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.names[watcher].append(name)
            state.times[watcher] = now
        }
    }

    /// How many of `watchers` have emitted `name` last, and the latest of their emission times.
    func reached(_ watchers: [Int], _ name: String) -> (count: Int, last: ContinuousClock.Instant?) {
        state.withLock { state in
            var count = 0
            var last: ContinuousClock.Instant?
            for watcher in watchers where state.names[watcher].last == name {
                count += 1
                if let time = state.times[watcher] { last = max(last ?? time, time) }
            }
            return (count, last)
        }
    }

    var names: [[String]] { state.withLock { $0.names } }
}

extension CacheWorkloads {
    /// Watchers on distinct queries (`post(id:)`, one post each) over the same records; each round renames the
    /// user who wrote the most posts (`write(objects:)`, one record), in a cache with every watcher and in one
    /// with only the watchers of that user's posts, taking turns. The time is from the write to the last affected
    /// watcher's answer; the difference between the two caches, over the unaffected watchers, is the cost of
    /// each. At the end one write renames every post: each watcher must then have emitted exactly its first
    /// answer, the renames (only the affected ones) and that last answer, in that order.
    func watch(into table: inout ResultTable) async throws {
        let count = options.watchers
        var tally: [String: Int] = [:]
        for author in feed.authors.prefix(count) { tally[author, default: 0] += 1 }
        guard let (author, _) = tally.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) })
        else { return }
        let affected = feed.authors.prefix(count).indices.filter { feed.authors[$0] == author }
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")  // never asked: every watch is cacheOnly
        defer { Task { try? await server.shutdown() } }

        let all = try await WatchedCache(feed: feed, path: file("watch-all"), watching: Array(0..<count), server)
        let few = try await WatchedCache(feed: feed, path: file("watch-few"), watching: affected, server)
        var allTimes: [Double] = []
        var fewTimes: [Double] = []
        var allWrites: [Double] = []
        var fewWrites: [Double] = []
        for round in 0...options.rounds {
            let measured = round > 0
            progress(measured ? "watch: round \(round) of \(options.rounds)" : "watch: warm-up round")
            let name = "Renamed \(round)"
            for side in round % 2 == 0 ? [all, few] : [few, all] {
                let (write, emitted) = try await side.rename(author, to: name, awaiting: affected)
                if measured {
                    if side === all {
                        allWrites.append(write)
                        allTimes.append(emitted)
                    } else {
                        fewWrites.append(write)
                        fewTimes.append(emitted)
                    }
                }
            }
        }
        let renames = (0...options.rounds).map { "Renamed \($0)" }
        for side in [all, few] { try await side.checkOnlyAffectedEmitted(affected, renames: renames) }

        let unaffected = Double(max(count - affected.count, 1))
        let perWatcher = allTimes.indices.map { (allTimes[$0] - fewTimes[$0]) / unaffected }
        let perWatcherWrite = allWrites.indices.map { (allWrites[$0] - fewWrites[$0]) / unaffected }
        let median = Statistics.median(perWatcher) ?? .infinity
        let whole = (Statistics.median(allTimes) ?? 0) / Double(count)
        table.rows.append(
            ResultTable.Row(
                label: "watch: \(count) watchers, 1 record changed", cache: String(format: "%.2f µs", median * 1e6),
                peer: "per unaffected watcher",
                ratio: String(
                    format: "%.2f–%.2f µs", (perWatcher.min() ?? 0) * 1e6, (perWatcher.max() ?? 0) * 1e6),
                goal: "≤ 10 µs", met: median <= 10e-6))
        table.notes.append(
            "watch: \(affected.count) of \(count) watchers read the changed record (User:\(author)) and emitted "
                + "each rename, the other \(count - affected.count) none (checked in order with a last write). "
                + String(
                    format: "Write to last affected answer: %.2f ms with all %d watchers, %.2f ms with the %d "
                        + "affected only; the write's own call %.3f ms vs %.3f ms (per unaffected watcher %.2f µs). "
                        + "Upper bound: the whole time ÷ %d watchers = %.2f µs.",
                    (Statistics.median(allTimes) ?? 0) * 1e3, count, (Statistics.median(fewTimes) ?? 0) * 1e3,
                    affected.count, (Statistics.median(allWrites) ?? 0) * 1e3,
                    (Statistics.median(fewWrites) ?? 0) * 1e3, (Statistics.median(perWatcherWrite) ?? 0) * 1e6,
                    count, whole * 1e6))
    }
}

/// A cache holding `post(id:)` for every post of the feed, with watchers on some of them.
final class WatchedCache: Sendable {
    let cache: GQLCache
    let feed: Feed
    let watching: [Int]
    let emissions: Emissions
    let tasks: Mutex<[Task<Void, Never>]>

    init(feed: Feed, path: String, watching: [Int], _ server: GQLServer) async throws {
        cache = try GQLCache(path: path)
        self.feed = feed
        self.watching = watching
        guard case .array(let posts)? = feed.data["posts"] else { throw BenchError("the feed has no posts") }
        for post in posts {
            guard let id = post["id"] else { continue }
            try cache.write(Feed.postQuery, ["id": id], data: ["post": Self.watched(post)])
        }
        let emissions = Emissions(count: feed.posts)
        self.emissions = emissions
        var tasks: [Task<Void, Never>] = []
        for index in watching {
            let watch = cache.watch(server, Feed.postQuery, ["id": String(index + 1)], policy: .cacheOnly)
            tasks.append(
                Task {
                    do {
                        for try await result in watch {
                            emissions.record(index, result.data?["post"]?["author"]?["name"]?.stringValue ?? "?")
                        }
                    } catch {
                        emissions.record(index, "error: \(error)")
                    }
                })
        }
        self.tasks = Mutex(tasks)
        // Every watcher has emitted its first answer before the rounds start.
        while emissions.names.enumerated().contains(where: { watching.contains($0.offset) && $0.element.isEmpty }) {
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    deinit { tasks.withLock { for task in $0 { task.cancel() } } }

    /// The part of a post `post(id:)` selects.
    static func watched(_ post: GQLValue) -> GQLValue {
        let author = post["author"] ?? .null
        return [
            "__typename": "Post", "id": post["id"] ?? .null, "title": post["title"] ?? .null,
            "author": ["__typename": "User", "id": author["id"] ?? .null, "name": author["name"] ?? .null],
        ]
    }

    /// Renames user `author` (one record, as GQLSync writes a pulled object) and waits until every watcher of
    /// `affected` has emitted the new name: the seconds the write call took and until the last such answer.
    func rename(_ author: String, to name: String, awaiting affected: [Int]) async throws -> (Double, Double) {
        let start = ContinuousClock.now
        try cache.write(
            objects: [["__typename": "User", "id": .string(author), "name": .string(name)]], typename: "User")
        let written = ContinuousClock.now
        let deadline = start + .seconds(60)
        while true {
            let (count, last) = emissions.reached(affected, name)
            if count == affected.count, let last { return ((written - start).seconds, (last - start).seconds) }
            guard ContinuousClock.now < deadline else {
                throw BenchError("watch: \(count) of \(affected.count) affected watchers emitted \(name) in 60 s")
            }
            await Task.yield()
        }
    }

    /// Retitles every post, waits until every watcher has emitted that answer, and checks each one's emissions:
    /// its first answer, then the renames if it reads the renamed user (and nothing else), then the last answer.
    func checkOnlyAffectedEmitted(_ affected: [Int], renames: [String]) async throws {
        guard case .array(let posts)? = feed.data["posts"] else { return }
        let last = "Final"
        // The last answer: every watched post's author renamed to "Final" (one write of all users read).
        var users: [GQLValue] = []
        for index in watching {
            users.append(["__typename": "User", "id": posts[index]["author"]?["id"] ?? .null, "name": .string(last)])
        }
        try cache.write(objects: users, typename: "User")
        let deadline = ContinuousClock.now + .seconds(60)
        while emissions.reached(watching, last).count < watching.count {
            guard ContinuousClock.now < deadline else {
                throw BenchError("watch: not every watcher saw the last write")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let names = emissions.names
        for index in watching {
            let original = posts[index]["author"]?["name"]?.stringValue ?? ""
            let expected = [original] + (affected.contains(index) ? renames : []) + [last]
            guard names[index] == expected else {
                throw BenchError("watch: watcher \(index) emitted \(names[index]), expected \(expected)")
            }
        }
    }
}
