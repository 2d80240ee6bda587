import Foundation
import GQLCache
import GQLStore
import GQLTestSupport
import Testing

/// `gql-cli cache stats|gc|clear --db FILE` on a cache file written with GQLCache.
@Suite(.timeLimit(.minutes(2)))
struct CacheCommandTests {
    /// A cache file with a feed of two posts by one user, a `me` answer, and a mutation's answer.
    static func cacheFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("cache.sqlite")
        let cache = try GQLCache(path: path)
        try cache.write(
            "query { feed { id title author { id name } } }",
            data: [
                "feed": [
                    [
                        "__typename": "Post", "id": "1", "title": "One",
                        "author": ["__typename": "User", "id": "a", "name": "Ada"],
                    ],
                    [
                        "__typename": "Post", "id": "2", "title": "Two",
                        "author": ["__typename": "User", "id": "a", "name": "Ada"],
                    ],
                ]
            ])
        try cache.write(
            "mutation { createNote { id title } }",
            data: ["createNote": ["__typename": "Note", "id": "9", "title": "Nine"]])
        try cache.database.close()
        return path
    }

    @Test func statsGcAndClear() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.cacheFile(in: directory)
        let text = try await CLIProcess.succeed(["cache", "stats", "--db", path])
        #expect(text.hasPrefix("records 6\nbytes "), "\(text)")
        #expect(text.contains("  Post 2\n") && text.contains("  MUTATION_ROOT 1\n"), "\(text)")
        let stats = try GQLValue(json: try await CLIProcess.succeed(["cache", "stats", "--db", path, "--json"]))
        #expect(stats["records"] == 6 && (stats["bytes"]?.intValue ?? 0) > 100)
        #expect(stats["types"]?["User"] == 1 && stats["types"]?["QUERY_ROOT"] == 1)
        // The mutation's root and note are unreachable from the query root.
        #expect(try await CLIProcess.succeed(["cache", "gc", "--db", path]) == "removed 2 records, 0 references\n")
        let again = try GQLValue(json: try await CLIProcess.succeed(["cache", "gc", "--db", path, "--json"]))
        #expect(again == ["removedRecords": 0, "removedReferences": 0])
        #expect(try GQLCache(path: path).recordKeys() == ["Post:1", "Post:2", "QUERY_ROOT", "User:a"])
        #expect(try await CLIProcess.succeed(["cache", "clear", "--db", path]) == "removed 4 records\n")
        #expect(try GQLCache(path: path).recordKeys().isEmpty)
    }

    /// A damaged file: rows that are not records (a BLOB key, text keys that are not UTF-8, which read repaired
    /// as the same U+FFFD) are counted apart, removed by gc and by clear, and counted in what they print.
    @Test func statsGcAndClearCountTheRowsThatAreNotRecords() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.cacheFile(in: directory)
        func damage(_ keys: [String]) async throws {
            let db = try GQLDatabase(path: path)
            for key in keys {
                try await db.execute(
                    "INSERT INTO _gqlcache_records (key, fields, updated_at) VALUES (\(key), x'0100', 0)")
            }
            try await db.close()
        }
        try await damage(["CAST('Post:1' AS BLOB)", "CAST(x'FF' AS TEXT)", "CAST(x'FE' AS TEXT)"])
        let stats = try GQLValue(json: try await CLIProcess.succeed(["cache", "stats", "--db", path, "--json"]))
        #expect(stats["records"] == 6 && stats["damagedRows"] == 3, "\(stats)")
        let text = try await CLIProcess.succeed(["cache", "stats", "--db", path])
        #expect(text.hasPrefix("records 6\nbytes ") && text.contains("\ndamaged rows 3\n"), "\(text)")
        // The mutation's two records and the three rows.
        #expect(try await CLIProcess.succeed(["cache", "gc", "--db", path]) == "removed 5 records, 0 references\n")
        try await damage(["x'00'"])
        #expect(
            try await CLIProcess.succeed(["cache", "clear", "--db", path])
                == "removed 4 records and 1 damaged rows\n")
        let rows = try GQLDatabase(path: path).fetchAll(sql: "SELECT count(*) AS n FROM _gqlcache_records")
        #expect(rows == [["n": 0]])
    }

    @Test func aFileWithoutACacheIsRefusedAndLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("none.sqlite")
        let absent = try await CLIProcess.run(["cache", "stats", "--db", missing])
        #expect(absent.status == 1 && absent.stderr.contains("no database file at"))
        #expect(!FileManager.default.fileExists(atPath: missing))
        let other = directory.path("app.sqlite")
        try await GQLDatabase(path: other).execute("CREATE TABLE Thing (id INTEGER PRIMARY KEY)")
        let refused = try await CLIProcess.run(["cache", "gc", "--db", other])
        #expect(refused.status == 1 && refused.stderr.contains("holds no GQLCache"), "\(refused.stderr)")
        #expect(try GQLDatabase(path: other).tableNames() == ["Thing"])
    }

    @Test func subscribeWritesEachEventIntoTheCacheFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("events.sqlite")
        let server = try await ServeProcess.start(["--port", "0"])
        let subscriber = try BackgroundCLIProcess(
            [
                "subscribe", "--url", server.webSocket, ClientCommandTests.onCreate, "--count", "2", "--cache", path,
                "-v",
            ])
        let created = try await ClientCommandTests.mutate(
            until: { !subscriber.isRunning }, url: server.http, prefix: "e")
        let output = try await subscriber.wait()
        #expect(output.exited && output.status == 0, "exit \(output.status): \(output.stderr)")
        let events = try output.stdout.split(separator: "\n").map { try GQLValue(json: String($0)) }
        #expect(events.count == 2 && events.allSatisfy { $0["source"] == "network" }, "stdout: \(output.stdout)")
        // Each event's object is a record of its own in the file, under its type and key.
        let ids = events.compactMap { $0["data"]?["onCreateObjects"]?["objectId"]?.stringValue }
        #expect(ids.count == 2 && Set(ids).isSubset(of: created), "events: \(ids)")
        let cache = try GQLCache(path: path)
        for id in ids {
            let record = try cache.record(GQLCache.key("Objects", id))
            #expect(
                record?["text"] == "probe" && record?["__typename"] == "Objects",
                "\(id): \(String(describing: record))")
        }
        // --policy does not apply to subscribe.
        let refused = try await CLIProcess.run(
            [
                "subscribe", "--url", server.webSocket, ClientCommandTests.onCreate, "--cache", path, "--policy",
                "cache-first",
            ])
        #expect(
            refused.status != 0 && refused.stderr.contains("--policy does not apply to subscribe"), "\(refused.stderr)")
    }

    @Test func queryThroughACacheFileByPolicy() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("answers.sqlite")
        let server = try await ServeProcess.start(["--port", "0"])
        _ = try await CLIProcess.succeed([
            "mutate", "--url", server.http, ClientCommandTests.create, "--variables",
            #"{"input": {"objectId": "c-1", "text": "Cached", "number": 1}}"#,
        ])
        func query(_ options: [String]) async throws -> CLIProcess.Output {
            try await CLIProcess.run(
                ["query", "--url", server.http, ClientCommandTests.get, "--var", "id=c-1", "--cache", path] + options)
        }
        func response(_ options: [String]) async throws -> GQLValue {
            let output = try await query(options)
            #expect(output.status == 0, "\(options): \(output.stderr)")
            return try GQLValue(json: output.stdout)
        }
        let first = try await response(["--verbose"])
        #expect(first["source"] == "network" && first["data"]?["getObjects"]?["text"] == "Cached")
        let second = try await response(["-v", "--policy", "cache-first"])
        #expect(second["source"] == "cache" && second["data"] == first["data"])
        // Without --verbose the response is as the server's.
        #expect(try await response([])["source"] == nil)
        let both = try await query(["-v", "--policy", "cache-and-network"])
        let lines = both.stdout.split(separator: "\n").map { try? GQLValue(json: String($0)) }
        #expect(lines.map { $0?["source"] } == ["cache", "network"], "\(both.stdout)")
        #expect(try await response(["-v", "--policy", "network-only"])["source"] == "network")
        #expect(try await response(["-v", "--policy", "network-first"])["source"] == "network")
        #expect(try await response(["-v", "--policy", "cache-only"])["source"] == "cache")

        _ = try await server.stop()
        // Every policy that may read the cache answers from it with the server stopped; cache-and-network's
        // cached response stands, with a note that the network's did not come.
        for policy in ["cache-first", "cache-only", "network-first", "cache-and-network"] {
            let offline = try await response(["-v", "--policy", policy])
            #expect(offline["source"] == "cache" && offline["data"] == first["data"], "\(policy)")
        }
        let note = try await query(["--policy", "cache-and-network"]).stderr
        #expect(note.contains("the network's did not come: the query failed: cannot connect"), "\(note)")
        #expect(try await query(["--policy", "network-only"]).status != 0)
        // --policy and --verbose need --cache.
        let refused = try await CLIProcess.run(["query", "--url", server.http, ClientCommandTests.get, "-v"])
        #expect(refused.status != 0 && refused.stderr.contains("--verbose needs --cache"), "\(refused.stderr)")
    }

    /// cache-and-network does not print a cached `no-cache` answer before the network's (as GQLCache.fetch does
    /// not return it): online only the network's response, offline none and a failure.
    @Test func cacheAndNetworkDoesNotPrintANoCacheAnswerUnrevalidated() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("no-cache.sqlite")
        // Answers 0 and 1 say no-cache; from answer 2 on the connection closes without a word.
        let server = try HostileServer { index, _ in
            guard index < 2 else { return .raw([]) }
            return .http(
                200, #"{"data": {"note": {"__typename": "Note", "id": "1", "title": "answer \#(index)"}}}"#,
                headers: ["Cache-Control: no-cache"])
        }
        defer { server.stop() }
        func query(_ options: [String]) async throws -> CLIProcess.Output {
            try await CLIProcess.run(
                ["query", "--url", server.url, "query { note(id: 1) { id title } }", "--cache", path, "-v"] + options)
        }
        let stored = try await query([])
        #expect(stored.status == 0 && stored.stdout.contains("answer 0"), "\(stored.stdout) \(stored.stderr)")
        let online = try await query(["--policy", "cache-and-network"])
        let sources = online.stdout.split(separator: "\n").map { (try? GQLValue(json: String($0)))?["source"] }
        #expect(online.status == 0 && sources == ["network"], "\(online.stdout) \(online.stderr)")
        let offline = try await query(["--policy", "cache-and-network"])
        #expect(offline.status != 0 && offline.stdout.isEmpty, "\(offline.stdout) \(offline.stderr)")
        // cache-only still reads it (it asks no server).
        #expect(try await query(["--policy", "cache-only"]).stdout.contains("answer 1"))
    }
}
