import Foundation
import GQLCore
import GQLStore
import GQLTestSupport
import Testing

/// `gql-cli demo`: the scripted tour runs, says what happened, and cleans up.
@Suite(.timeLimit(.minutes(2)))
struct DemoCommandTests {
    static let keyLines = [
        "1. Objects",
        "   insert        1001 John Smith, 42",
        "   fetchOne(key: 1001) -> 1001 John Smith, 43",
        "   check(key: 1001) -> true, check(key: 9999) -> false",
        "2. Dictionary API",
        "   db.count(\"User\") -> 6",
        "3. Transactions",
        "   after the rollback: count() 8, 1001 is 1001 John Smith, 43, approved",
        "4. Observers",
        "   callback heard:      insert 4001, update 1001, delete 1004",
        "   AsyncSequence heard: insert 4001, insert 4002",
        "   removeObserver, insert 4004 (age 90) -> callback heard 0 more",
        "5. Migrations",
        "   user_version before: 0",
        "   user_version after: 2",
        "   migrate again -> applied []",
        "6. A new property adds its column",
        "   columns of User: userId, name, age, approved, nickname",
        "   columns of User: userId, name, age, approved, nickname, email",
        "   UserV2.fetchOne(key: 1001) -> John Smith, email \"unknown@example.com\" (the default, for existing rows)",
        "7. Encryption at rest (GQLDatabase(path:key:))",
        "   grep \"John Smith\" plain.sqlite  -> found",
        "   grep \"John Smith\" secret.sqlite -> not found; \"SQLite format 3\" -> not found",
        "   .passphrase(\"wrong horse battery\") -> GQLError.wrongKey: the key does not open the encrypted database at secret.sqlite; the file was not changed [operation: open]",
        "   rekey(.raw(key)) -> every page rewritten under a 32-byte key (one that opens without PBKDF2's cost)",
        "   reopened with .raw(key) -> count() 3, fetchOne(key: 1001) -> 1001 John Smith, 42",
        "8. The development server (gql-cli serve)",
        "   GQLServer(AppSync:key:realtime:) connect(), subscription(onCreateObjects, onUpdateObjects) -> live",
        "   HTTP createObjects(demo-1, \"Hello\", 1)        -> demo-1 \"Hello\" 1 (_version 1)",
        "   HTTP updateObjects(demo-1, \"Hello again\", 2) -> demo-1 \"Hello again\" 2 (_version 2)",
        "   subscription heard: onCreateObjects demo-1 \"Hello\" 1 (_version 1)",
        "                       onUpdateObjects demo-1 \"Hello again\" 2 (_version 2)",
        "   HTTP listObjects without x-api-key -> 401",
        "   server.shutdown() -> stopped",
        "9. Typed operations from .graphql files (GQLCodegen, gql-cli codegen)",
        "     public struct RecentObjectsQuery: GQLTypedQuery",
        "         public init(limit: Int? = nil)",
        "                     public var objectId: String",
        "   in an app: let data = try await server.fetch(RecentObjectsQuery(limit: 2))",
        "     the same document against the dev server -> data.listObjects?.items: demo-t1 \"Milk\", demo-t2 \"Train tickets\"",
        "10. Offline sync (GQLSync)",
        "   server down: 3 local writes, each with sync.steady(…, in: tx) -> pending 3, offline",
        "   server started on the same port, drain() -> pending 0, server has demo-s1, demo-s2, demo-s3",
        "   another client edits demo-s2; pull(Object.self, query: \"SyncObjects\") -> base, 3 written: demo-s2 \"Call Ann at 5\" (_version 2)",
        "11. A response cache for offline screens (GQLCache)",
        "   fetch(server, \"query Notes {…}\", policy: .cacheFirst) -> [\"Milk\", \"Train tickets\"] from the network",
        "   the same fetch again -> from the cache, no request; the cache holds 2 Objects records",
        "   mutate(…) changes Objects:demo-c1 -> the screen's watcher emits [\"Milk and eggs\", \"Train tickets\"]",
        "   server stopped: fetch(…, policy: .networkFirst) -> [\"Milk and eggs\", \"Train tickets\"] from the cache",
        "Every service at once for steps 13 and 14 (gql-cli serve --all, in-process)",
        "13. Files (GQLStorage against the S3 emulator of gql-cli serve --all)",
        "   downloaded it again: the same bytes",
        "   list demo-photos/2026/ -> 2026/holiday.mov, 2026/note.txt",
        "14. Sign-up, owner-scoped data and a push (the Auth0 and OneSignal emulators of gql-cli serve --all)",
        "   listNotes with bob's token -> 0 notes",
        "   signed out: the refresh token is revoked at the emulator",
        "Removed the temporary database.",
    ]

    @Test func tourRunsAndPrintsEachStep() async throws {
        let output = try await CLIProcess.succeed(["demo"])
        let lines = output.split(separator: "\n").map(String.init)
        for line in Self.keyLines {
            #expect(lines.contains(line), "missing: \(line)")
        }
        // The steps come in order.
        let positions = Self.keyLines.compactMap { lines.firstIndex(of: $0) }
        #expect(positions == positions.sorted())
        // The temporary database is gone.
        let database = try #require(lines.first { $0.hasPrefix("Database: ") }?.dropFirst("Database: ".count))
        #expect(!FileManager.default.fileExists(atPath: String(database)))
        #expect(
            !FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: String(database)).deletingLastPathComponent().path))
        try expectOneServeAll(lines)
    }

    /// Steps 13 and 14 ran against the one `serve --all` the demo starts: the endpoints it printed (as `serve`
    /// prints them) are the ones the steps used, its state was in the demo's temporary folder, and that is removed.
    /// (Part of ``tourRunsAndPrintsEachStep()``: each run of the demo costs CI seconds.)
    private func expectOneServeAll(_ lines: [String]) throws {
        let start = try #require(lines.firstIndex { $0.hasPrefix("Every service at once") })
        // The lines serve prints, once, after the heading: "HTTP      http://127.0.0.1:PORT/graphql" and so on.
        func printed(_ label: String) throws -> String {
            let line = try #require(lines[start...].first { $0.hasPrefix("   \(label) ") }, "no \(label) line")
            let value = line.dropFirst(3 + label.count).drop { $0 == " " }
            return String(value.prefix { $0 != " " })
        }
        let graphql = try printed("HTTP")
        let storage = try printed("Storage")
        let auth = try printed("Auth")
        let push = try printed("Push")
        let data = try printed("Data")
        let urls = [graphql, storage, auth, push]
        for url in urls { #expect(url.hasPrefix("http://127.0.0.1:"), "\(url)") }
        // Four parts, four ports of their own, each printed once.
        #expect(Set(urls.compactMap { URL(string: $0)?.port }).count == 4)
        #expect(lines.filter { $0.hasPrefix("   Storage ") }.count == 1)
        // The steps print the composition's URLs, and no other emulator's.
        #expect(
            lines.contains(
                "   GQLStorageEmulator at \(storage), bucket demo-photos, signatures checked as S3 checks them"))
        #expect(
            lines.contains {
                $0.hasPrefix("   Auth0 emulator at \(auth) (issuer ") && $0.hasSuffix("OneSignal emulator at \(push)")
            })
        #expect(lines.contains("   GraphQL API at \(graphql), checking the Auth0 emulator's tokens"))
        // Every address steps 13 and 14 print (presigned URL included) is on one of the composition's ports.
        let ports = Set(urls.compactMap { URL(string: $0)?.port })
        let step13 = try #require(lines.firstIndex { $0.hasPrefix("13. ") })
        let address = try Regex(#"127\.0\.0\.1:([0-9]+)"#)
        let used = lines[step13...].flatMap { line in
            line.matches(of: address).compactMap { $0.output[1].substring.flatMap { Int($0) } }
        }
        #expect(used.count >= 4)
        #expect(Set(used).isSubset(of: ports), "ports \(used) beside the composition's \(ports)")
        // Its state was in the demo's temporary folder, which is gone.
        let database = try #require(lines.first { $0.hasPrefix("Database: ") }?.dropFirst("Database: ".count))
        let folder = URL(fileURLWithPath: String(database)).deletingLastPathComponent().path
        #expect(data.hasPrefix(folder + "/"))
        #expect(!FileManager.default.fileExists(atPath: data))
    }

    #if canImport(FoundationNetworking)  // Foundation's HTTP client is libcurl (Linux): it reads http_proxy
        /// A step on the demo's one `serve --all` that fails stops the demo: it exits non-zero with a message that says
        /// the demo stopped, that the composition was shut down, and why; its state (in the demo's temporary folder) is
        /// gone. The demo waits for the composition's run to end after shutting it down, so a composition left running
        /// would keep it from exiting at all. The step made to fail from outside is 13's presigned-URL fetch: it goes
        /// through Foundation's HTTP client (libcurl), which honours `http_proxy`, here a proxy on 127.0.0.1 that drops
        /// every connection; no earlier step reads that variable (GQLServer and GQLStorage use AsyncHTTPClient, which
        /// ignores it).
        @Test func aFailingStepShutsServeDownAndExitsNonZero() async throws {
            let (listener, port) = try LoopbackListener.open(backlog: 16)
            let stopped = GQLLocked(false)
            let dropped = GQLLocked(0)
            LoopbackListener.serve(listener, until: { stopped.withLock { $0 } }) { connection in
                dropped.withLock { $0 += 1 }
                close(connection)
            }
            defer { stopped.withLock { $0 = true } }
            let output = try await CLIProcess.run(
                ["demo"], environment: ["http_proxy": "http://127.0.0.1:\(port)", "no_proxy": "", "NO_PROXY": ""])
            #expect(output.exited, "the demo crashed (signal \(output.status))")
            #expect(output.status == 1, "exit status \(output.status)")
            #expect(dropped.withLock { $0 } >= 1, "step 13's fetch never reached the proxy")
            let lines = output.stdout.split(separator: "\n").map(String.init)
            // It got as far as step 13 on serve --all, and no further.
            #expect(lines.contains { $0.hasPrefix("13. Files") })
            #expect(!lines.contains { $0.hasPrefix("14. ") } && !lines.contains("Removed the temporary database."))
            // The message names what stopped and why, on standard error.
            #expect(output.stderr.contains("the demo stopped"), "\(output.stderr)")
            #expect(output.stderr.contains("gql-cli serve --all was shut down"), "\(output.stderr)")
            #expect(output.stderr.contains("13. Files: the presigned URL could not be fetched"), "\(output.stderr)")
            #expect(!output.stderr.contains("X-Amz-Signature"), "the message shows the presigned URL's signature")
            // serve --all's state was in the demo's temporary folder: gone with it.
            let data = try #require(lines.first { $0.hasPrefix("   Data ") }).dropFirst("   Data ".count)
                .drop { $0 == " " }.prefix { $0 != " " }
            #expect(data.contains("gql-cli-demo-"))
            #expect(!FileManager.default.fileExists(atPath: String(data)))
            let database = try #require(lines.first { $0.hasPrefix("Database: ") }?.dropFirst("Database: ".count))
            #expect(!FileManager.default.fileExists(atPath: String(database)))
        }
    #endif

    @Test func tourIsDeterministic() async throws {
        func withoutPath(_ text: String) -> [String] {
            // The temporary path and the server's port change from run to run; so do the emulators' ports, the
            // user ids the Auth0 emulator makes and the ids of sent notifications (steps 13 and 14).
            let varying = [
                (#"127\.0\.0\.1:[0-9]+"#, "127.0.0.1:PORT"), (#"auth0\|[0-9a-f]+"#, "auth0|ID"),
                (#"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, "NOTIFICATION-ID"),
                // The demo's temporary folder, where serve --all keeps its state (its Data line).
                (#"gql-cli-demo-[0-9A-F-]{36}"#, "gql-cli-demo-ID"),
            ]
            return text.split(separator: "\n")
                .filter { !$0.hasPrefix("Database: ") && !$0.contains("listening on http://") }
                .map { line in
                    varying.reduce(String(line)) { text, rule in
                        text.replacingOccurrences(of: rule.0, with: rule.1, options: .regularExpression)
                    }
                }
        }
        let first = try await CLIProcess.succeed(["demo"])
        let second = try await CLIProcess.succeed(["demo"])
        #expect(withoutPath(first) == withoutPath(second))
    }

    @Test func keepLeavesAWholeDatabase() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("kept/demo.sqlite")
        let output = try await CLIProcess.succeed(["demo", "--keep", path])
        #expect(output.hasSuffix("Kept the database at \(path).\n"))
        // The file alone holds every commit (the WAL was checkpointed into it).
        let copy = directory.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let db = try GQLDatabase(path: copy)
        #expect(try db.count("User") == 11)
        #expect(try GQLMigrator.version(of: db) == 2)
        #expect(try db.fetchOne("User", key: 5001)?["email"] == "ned@example.com")

        let message = try await CLIProcess.fail(["demo", "--keep", path], status: 64)
        #expect(message.contains("already exists"))
    }
}
