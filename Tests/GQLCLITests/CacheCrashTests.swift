import Foundation
import GQLCache
import GQLStore
import GQLTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process writing answers into a GQLCache file (`gql-cli cache write-loop`) killed with SIGKILL mid-write:
/// the file stays readable and holds one whole answer, the last one the process reported or the one it was
/// committing — never a mix (each answer is one transaction).
@Suite(.timeLimit(.minutes(2))) struct CacheCrashTests {
    static let query = "query { feed { id title author { id name } } }"

    @Test func aKillMidWriteLeavesTheCacheReadable() async throws {
        let seed = TestSeed.make("cache kills")
        let directory = try TemporaryDirectory()
        let path = directory.path("cache.sqlite")
        for kill in 0..<3 {
            // Wait for 1…6 committed rounds, drawn from the seed; then kill, whatever is being written.
            let rounds = Int((seed >> UInt64(kill * 8)) % 6) + 1
            let child = try BackgroundCLIProcess(["cache", "write-loop", path, "--count", "1000000"])
            while child.isRunning && child.lines.count < rounds { try await Task.sleep(for: .milliseconds(2)) }
            child.send(SIGKILL)
            _ = try await child.wait()
            let reported = child.lines.last.flatMap { Int($0.dropFirst("wrote ".count)) } ?? 0
            #expect(reported >= rounds, "the loop stopped early: \(child.stderr)")

            let cache = try GQLCache(path: path)
            let feed = try cache.read(Self.query)["feed"]?.arrayValue ?? []
            #expect(feed.count == 500)
            let titles = Set(feed.compactMap { $0["title"]?.stringValue })
            let names = Set(feed.compactMap { $0["author"]?["name"]?.stringValue })
            #expect(titles.count == 1 && names == titles, "kill \(kill): \(titles) \(names)")
            let round = titles.first.flatMap { Int($0.dropFirst("round ".count)) } ?? -1
            #expect(round == reported || round == reported + 1, "kill \(kill): round \(round), reported \(reported)")
            try await cache.database.close()
        }
    }
}
