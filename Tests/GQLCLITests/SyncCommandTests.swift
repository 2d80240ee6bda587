import Foundation
import GQLStore
import GQLSync
import Testing

/// `gql-cli sync status|push|pull|failed|retry|drop` on an app database whose outbox was filled by a GQLSync
/// engine, against a `gql-cli serve` child process.
@Suite(.timeLimit(.minutes(3)))
struct SyncCommandTests {
    static let create =
        "mutation CreateObjects($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }"

    /// An app database with an `Objects` table and five queued creates, the third of which the server refuses.
    static func queuedDatabase(_ path: String, url: String) async throws {
        let queries = GQLQuery()
        try queries.load(create, sourceName: "sync-cli-tests")
        var configuration = GQLSync.Configuration()
        configuration.name = "cli"
        configuration.queries = queries
        configuration.inputArgument = "input"
        configuration.delivers = false
        let db = try GQLDatabase(path: path)
        try await db.execute("CREATE TABLE Objects (objectId TEXT PRIMARY KEY, text TEXT, number INTEGER)")
        let server = GQLServer(HTTP: url)
        let sync = try GQLSync(server, database: db, configuration: configuration)
        for n in 1...5 {
            let number: any GQLValueConvertible = n == 3 ? "three" : n
            try await sync.steady("CreateObjects", ["objectId": "o-\(n)", "text": "object \(n)", "number": number])
        }
        try await sync.shutdown()
        try await server.shutdown()
        try await db.close()
    }

    @Test func pushFailedRetryDropAndPull() async throws {
        let serve = try await ServeProcess.start(["--port", "0"])
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        try await Self.queuedDatabase(path, url: serve.http)
        let common = [path, "--url", serve.http, "--name", "cli"]

        let before = try await CLIProcess.succeed(["sync", "status"] + common)
        #expect(before.contains("pending 5\n") && before.contains("failed 0\n"), "\(before)")

        // Not a terminal: a line per item, then the totals.
        let pushed = try await CLIProcess.succeed(["sync", "push"] + common)
        let lines = pushed.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("sent ") }.count == 4, "\(pushed)")
        #expect(lines.filter { $0.hasPrefix("failed ") }.count == 1, "\(pushed)")
        #expect(lines.last?.hasPrefix("pushed:") == true)

        let failed = try await CLIProcess.succeed(["sync", "failed", "--json"] + common)
        let item = try GQLValue(json: String(failed.split(separator: "\n").first ?? ""))
        #expect(item["name"] == "CreateObjects")
        let id = try #require(item["id"]?.intValue)

        #expect(try await CLIProcess.succeed(["sync", "retry"] + common + ["\(id)"]) == "queued \(id) again\n")
        #expect(try await CLIProcess.succeed(["sync", "status"] + common).contains("pending 1\n"))
        _ = try await CLIProcess.succeed(["sync", "push"] + common)
        #expect(try await CLIProcess.succeed(["sync", "drop"] + common + ["\(id)"]) == "dropped \(id)\n")
        let after = try await CLIProcess.succeed(["sync", "status"] + common)
        #expect(after.contains("pending 0\n") && after.contains("failed 0\n"), "\(after)")
        let missing = try await CLIProcess.fail(["sync", "drop"] + common + ["\(id)"])
        #expect(missing.contains("no failed outbox item \(id)"))

        // The pull reads two items a page into the table, then asks only for changes.
        try await GQLDatabase(path: path).execute("DELETE FROM Objects")
        let pulled = try await CLIProcess.succeed(["sync", "pull"] + common + ["--table", "Objects", "--limit", "2"])
        #expect(pulled.split(separator: "\n").filter { $0.hasPrefix("page ") }.count == 2, "\(pulled)")
        #expect(pulled.contains("pulled (base): 2 page(s), 4 written"), "\(pulled)")
        let rows = try GQLDatabase(path: path).fetchAll(sql: "SELECT objectId FROM Objects ORDER BY objectId")
        #expect(rows.compactMap { $0["objectId"]?.stringValue } == ["o-1", "o-2", "o-4", "o-5"])
        let delta = try await CLIProcess.succeed(["sync", "pull"] + common + ["--table", "Objects"])
        #expect(delta.contains("pulled (delta)"), "\(delta)")
        #expect(try await CLIProcess.succeed(["sync", "status"] + common).contains("cursor SyncObjects "))
        let status = try GQLValue(json: try await CLIProcess.succeed(["sync", "status", "--json"] + common))
        #expect(status["engine"] == "cli" && status["pending"] == 0 && status["failed"] == 0, "\(status)")
        #expect(status["cursors"]?["SyncObjects"]?["startedAt"]?.intValue ?? 0 > 0, "\(status)")
        _ = try await serve.stop()
    }

    @Test func pullCreatesTheFileAndTheTableFromTheServersType() async throws {
        let serve = try await ServeProcess.start(["--port", "0"])
        let directory = try TemporaryDirectory()
        let server = GQLServer(HTTP: serve.http)
        for n in 1...3 {
            let input: GQLValue = [
                "objectId": .string("o-\(n)"), "text": .string("object \(n)"), "number": .int(Int64(n)),
            ]
            #expect(try await server.mutation(Self.create, ["input": input]).errors.isEmpty)
        }
        let delete = "mutation DeleteObjects($input: DeleteObjectsInput!) { deleteObjects(input: $input) { objectId } }"
        let deleted = try await server.mutation(delete, ["input": ["objectId": "o-2", "_version": 1] as GQLValue])
        #expect(deleted.errors.isEmpty, "\(deleted.errors)")
        try await server.shutdown()

        let path = directory.path("new.sqlite")
        let common = [path, "--url", serve.http, "--table", "Objects"]
        let pulled = try await CLIProcess.succeed(["sync", "pull"] + common)
        #expect(pulled.hasPrefix("created table Objects (objectId, "), "\(pulled)")
        #expect(pulled.contains("; key objectId)") && pulled.contains("pulled (base)"), "\(pulled)")
        let db = try GQLDatabase(path: path)
        let columns = try db.fetchAll(sql: "SELECT name, type, pk FROM pragma_table_info('Objects')")
        let byName = Dictionary(
            uniqueKeysWithValues: columns.compactMap { row in row["name"]?.stringValue.map { ($0, row) } })
        #expect(byName["objectId"]?["pk"] == 1 && byName["objectId"]?["type"] == "TEXT")
        #expect(byName["number"]?["type"] == "INTEGER" && byName["_version"]?["type"] == "INTEGER")
        #expect(byName["_deleted"] != nil, "the tombstone flag is selected, so deletions reach the table")
        let rows = try db.fetchAll(sql: "SELECT objectId, number FROM Objects ORDER BY objectId")
        #expect(rows.compactMap { $0["objectId"]?.stringValue } == ["o-1", "o-3"])
        #expect(rows.compactMap { $0["number"]?.intValue } == [1, 3])
        try await db.close()

        // The table is there now: the next pull only pulls.
        let again = try await CLIProcess.succeed(["sync", "pull"] + common)
        #expect(!again.contains("created table") && again.contains("pulled (delta)"), "\(again)")
        // A type the server does not have is an error that says what to give.
        let unknown = try await CLIProcess.fail(["sync", "pull", path, "--url", serve.http, "--table", "Nothing"])
        #expect(unknown.contains("no query field syncNothings"), "\(unknown)")
        _ = try await serve.stop()
    }

    @Test func pullStopsAfterThePageLimitAndRefusesLimitsBelowOne() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("pages.sqlite")
        // Refused before anything is opened or made: no server is asked, no file is created.
        for value in ["0", "-3", "abc", "1.5"] {
            let message = try await CLIProcess.fail(
                [
                    "sync", "pull", path, "--url", "http://127.0.0.1:9/graphql", "--table", "Objects",
                    "--page-limit=\(value)",
                ],
                status: 64)
            let expected = Int(value) == nil ? "'\(value)' is invalid for '--page-limit <pages>'" : "at least 1"
            #expect(message.contains("--page-limit") && message.contains(expected), "\(value): \(message)")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        let help = try await CLIProcess.succeed(["sync", "pull", "--help"])
        #expect(help.contains("--page-limit <pages>") && help.contains("The most pages one pull fetches"), "\(help)")

        // Three objects at one a page: two pages are not enough, three are.
        let serve = try await ServeProcess.start(["--port", "0"])
        let server = GQLServer(HTTP: serve.http)
        for n in 1...3 {
            let input: GQLValue = ["objectId": .string("o-\(n)"), "text": .string("object \(n)")]
            #expect(try await server.mutation(Self.create, ["input": input]).errors.isEmpty)
        }
        try await server.shutdown()
        let common = [path, "--url", serve.http, "--table", "Objects", "--limit", "1"]
        let pulled = try await CLIProcess.succeed(["sync", "pull"] + common + ["--page-limit", "3"])
        #expect(pulled.contains("pulled (base): 3 page(s), 3 written"), "\(pulled)")
        let stopped = try await CLIProcess.run(["sync", "pull"] + common + ["--base", "--page-limit", "2"])
        #expect(stopped.exited && stopped.status == 1)
        #expect(stopped.stderr.contains("still had a nextToken after 2 pages"), "\(stopped.stderr)")
        #expect(stopped.stdout.split(separator: "\n").filter { $0.hasPrefix("page ") }.count == 2, "\(stopped.stdout)")
        _ = try await serve.stop()
    }

    @Test func pushStopsWhenTheServerIsUnreachable() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        // A port nothing listens on: a server that was started and stopped.
        let serve = try await ServeProcess.start(["--port", "0"])
        let url = serve.http
        _ = try await serve.stop()
        try await Self.queuedDatabase(path, url: url)
        let message = try await CLIProcess.fail(["sync", "push", path, "--url", url, "--name", "cli", "--timeout", "2"])
        #expect(message.contains("unreachable"), "\(message)")
        #expect(
            try await CLIProcess.succeed(["sync", "status", path, "--url", url, "--name", "cli"]).contains(
                "pending 5\n"))
    }

    /// The database file and whatever SQLite keeps beside it, byte for byte.
    static func files(in directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path("")) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.path(name)))
        }
        return files
    }

    /// Every file in the directory: its bytes and when it was last changed.
    static func filesAndDates(in directory: TemporaryDirectory) throws -> [String: [String]] {
        try files(in: directory).reduce(into: [:]) { entries, file in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory.path(file.key))
            let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            entries[file.key] = [file.value.base64EncodedString(), "\(date)"]
        }
    }

    @Test func statusWithTheRightNameChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.sqlite")
        let url = "http://127.0.0.1:9/graphql"
        try await Self.queuedDatabase(path, url: url)
        // An item in a state the engine does not know: an engine opened on the file would set it aside (a write).
        let db = try GQLDatabase(path: path)
        try await db.execute("UPDATE _gqlsync_outbox SET state = 'lost' WHERE id = 2")
        try await db.execute(
            "INSERT INTO _gqlsync_cursors (engine, query, variables, started_at, taken_at) VALUES ('cli', 'Q', '', 5, 0)"
        )
        try await db.close()
        let before = try Self.filesAndDates(in: directory)
        #expect(before.keys.sorted() == ["app.sqlite"], "\(before.keys)")

        let common = [path, "--url", url, "--name", "cli"]
        let status = try await CLIProcess.succeed(["sync", "status"] + common)
        #expect(status == "engine cli\npending 4\nfailed 1\ncursor Q 5 (1970-01-01T00:00:00.005Z)\n", "\(status)")
        let json = try GQLValue(json: try await CLIProcess.succeed(["sync", "status", "--json"] + common))
        #expect(json["pending"] == 4 && json["failed"] == 1 && json["cursors"]?["Q"]?["startedAt"] == 5, "\(json)")
        // Not a byte, not a date, no -wal, -shm or journal beside it.
        let after = try Self.filesAndDates(in: directory)
        #expect(after == before, "status changed the directory: \(before.keys.sorted()) → \(after.keys.sorted())")
        let rows = try GQLDatabase(path: path).fetchAll(sql: "SELECT state FROM _gqlsync_outbox WHERE id = 2")
        #expect(rows.first?["state"] == "lost")
    }

    @Test func aMistypedEngineNameChangesNothingAndNamesTheEnginesThere() async throws {
        let directory = try TemporaryDirectory()
        // A name a URI would have to escape: the look is an immutable read through one.
        let path = directory.path("app ?#%.sqlite")
        // Nothing is sent: a port nothing listens on.
        let url = "http://127.0.0.1:9/graphql"
        try await Self.queuedDatabase(path, url: url)
        let before = try Self.files(in: directory)
        let commands: [[String]] = [
            ["status"], ["status", "--json"], ["failed"], ["retry", "1"], ["drop", "1"], ["push"],
        ]
        for command in commands {
            let arguments = ["sync", command[0], path, "--url", url, "--name", "clj"] + command.dropFirst()
            let message = try await CLIProcess.fail(arguments)
            #expect(message.contains("no sync engine named 'clj' has an outbox in \(path)"), "\(command): \(message)")
            #expect(message.contains("engines there: 'cli'"), "\(command): \(message)")
        }
        // The name derived from the URL is checked the same way.
        let derived = try await CLIProcess.fail(["sync", "status", path, "--url", url])
        #expect(derived.contains("no sync engine named '127.0.0.1-9-graphql'"), "\(derived)")
        let after = try Self.files(in: directory)
        #expect(
            after == before,
            "a look changed the file or made others: \(before.mapValues(\.count)) → \(after.mapValues(\.count))")
        #expect(
            try GQLDatabase(path: path).fetchAll(sql: "SELECT name FROM _gqlsync_sequence WHERE name LIKE 'journal %'")
                .compactMap { $0["name"]?.stringValue } == ["journal cli"])

        // A database no engine ever opened stays without the engine's tables.
        let plain = directory.path("plain.sqlite")
        try await GQLDatabase(path: plain).execute("CREATE TABLE Notes (id INTEGER PRIMARY KEY)")
        let none = try await CLIProcess.fail(["sync", "status", plain, "--url", url, "--name", "cli"])
        #expect(none.contains("no sync engine has an outbox in \(plain)"), "\(none)")
        let tables = try GQLDatabase(path: plain).fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        #expect(tables.compactMap { $0["name"]?.stringValue } == ["Notes"])
        // The right name still works.
        #expect(
            try await CLIProcess.succeed(["sync", "status", path, "--url", url, "--name", "cli"]).contains(
                "pending 5\n"))
    }
}
