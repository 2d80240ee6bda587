import BenchKit
import Foundation
import GQLStore
import GQLSync

extension SyncWorkloads {
    /// The pull's contenders: GQLSync's `pull`, three apps' hand-written loops over the same pages and the same
    /// client, and the raw-SQL floor.
    static let pullContenders = ["sync", "dictionary", "codable", "prepared", "raw"]

    /// The server's `Objects` table brought to N rows, then paged (1,000 a page) into a fresh local file by `pull`,
    /// by hand and by raw SQLite statements; rates in rows/s. Each round runs every contender once, in an order
    /// that turns from round to round (the first goes last next round, and every other round is reversed).
    func pull(into table: inout ResultTable) async throws {
        try await seed()
        let expected = try serverDatabase.count("Objects")
        let serverRows = try serverDatabase.fetchRows(sql: Self.everyRow).rows
        let client = GQLServer(HTTP: http)
        let text = try configuration("unused").queries.document(named: "SyncObjects").text
        var rates: [String: [Double]] = [:]
        for round in 0...options.rounds {
            progress("pull round \(round)")
            let turn = round % Self.pullContenders.count
            let turned = Array(Self.pullContenders[turn...] + Self.pullContenders[..<turn])
            for contender in round % 2 == 0 ? turned : turned.reversed() {
                let file = path("pull-\(round)-\(contender).sqlite")
                var db = try GQLDatabase(path: file)
                try db.register(BenchObject.self)
                // The previous contender's 100,000 rows are written back now, not during this one's pull.
                flushToDisk()
                // `BENCH_CALLGRIND=pull.sync` (pull.dictionary, pull.codable …) counts the measured rounds.
                let section = round > 0 ? "pull.\(contender)" : "warm-up"
                let seconds: Double
                switch contender {
                case "sync":
                    let engine = try GQLSync(client, database: db, configuration: configuration("pull"))
                    CallgrindSection.start(section)
                    seconds = try await timed {
                        let report = try await engine.pull(BenchObject.self, query: "SyncObjects", base: true)
                        guard report.written == expected else { throw BenchError("pull wrote \(report.written)") }
                    }
                    CallgrindSection.stop(section, operations: expected)
                    try await engine.shutdown()
                case "raw":
                    // The raw connection is the file's only one while it writes; the store opens it again to check.
                    try await db.close()
                    let writer = try RawPageWriter(path: file)
                    CallgrindSection.start(section)
                    seconds = try await timed {
                        try await pages(text, client: client) { items in try writer.write(items) }
                    }
                    CallgrindSection.stop(section, operations: expected)
                    try writer.close()
                    db = try GQLDatabase(path: file)
                default:
                    CallgrindSection.start(section)
                    seconds = try await timed {
                        try await pages(text, client: client) { items in
                            try await byHand(items, into: db, contender: contender)
                        }
                    }
                    CallgrindSection.stop(section, operations: expected)
                }
                let local = try db.fetchRows(sql: Self.everyRow).rows
                guard local == serverRows else {
                    throw BenchError("pull \(contender): the local rows differ from the server's")
                }
                try await db.close()
                let rate = Double(expected) / seconds
                if round > 0 { rates[contender, default: []].append(rate) }
                progress("  \(contender) \(Int(rate)) rows/s")
            }
        }
        try await client.shutdown()
        let best = (0..<options.rounds).map { index in
            ["dictionary", "codable", "prepared"].map { rates[$0]?[index] ?? 0 }.max() ?? 0
        }
        let sync = rates["sync"] ?? []
        table.add("pull \(expected) rows vs the best by hand", sync: sync, peer: best, unit: "rows/s", goal: 0.9)
        for contender in ["dictionary", "codable", "prepared"] {
            table.add(
                "pull vs by hand, \(contender)", sync: sync, peer: rates[contender] ?? [], unit: "rows/s", goal: nil)
        }
        table.add("pull vs raw SQLite (floor)", sync: sync, peer: rates["raw"] ?? [], unit: "rows/s", goal: nil)
    }

    /// Every local and server row, in one order: what a pull must leave behind.
    static let everyRow = "SELECT objectId, text, number, _version FROM Objects ORDER BY objectId"

    /// What an app writes without GQLSync, with the same client: fetch each page (`write` gets its items), in turn.
    private func pages(_ text: String, client: GQLServer, write: ([GQLValue]) async throws -> Void) async throws {
        var nextToken: String?
        repeat {
            var variables: [String: any GQLValueConvertible] = ["limit": 1000]
            if let nextToken { variables["nextToken"] = nextToken }
            let result = try await client.query(text, variables)
            guard result.errors.isEmpty, let page = result.data?["syncObjects"], let items = page["items"]?.arrayValue
            else { throw BenchError("by hand: a page failed: \(result.errors)") }
            nextToken = page["nextToken"]?.stringValue
            try await write(items)
        } while nextToken != nil
    }

    /// The upsert an app can prepare with GQLStore's public API: `fetchAll(sql:)` keeps a statement prepared per
    /// connection (GQLStore has no statement type of its own), as GQLSync's outbox does with its writes.
    static let preparedUpsert = """
        INSERT INTO Objects (objectId, text, number, _version) VALUES (?, ?, ?, ?)
        ON CONFLICT(objectId) DO UPDATE SET text = excluded.text, number = excluded.number, _version = excluded._version
        """

    /// One page written in one transaction by hand: with the dictionary API (`tx.insertUpdate`), with Codable
    /// objects (`insertUpdate(tx)`), or with the prepared upsert; tombstones deleted.
    private func byHand(_ items: [GQLValue], into db: GQLDatabase, contender: String) async throws {
        if contender == "codable" {
            let objects = try GQLValue.array(items).decode([BenchObject].self)
            try await db.write { tx in
                for object in objects { try object.insertUpdate(tx) }
            }
            return
        }
        let prepared = contender == "prepared"
        try await db.write { tx in
            for item in items {
                guard let key = item["objectId"] else { continue }
                if item["_deleted"]?.boolValue == true {
                    try tx.deleteOne("Objects", key: key)
                } else if prepared {
                    _ = try tx.fetchAll(
                        sql: Self.preparedUpsert,
                        [key, item["text"] ?? .null, item["number"] ?? .null, item["_version"] ?? .null])
                } else {
                    try tx.insertUpdate(
                        "Objects",
                        [
                            "objectId": key, "text": item["text"] ?? .null, "number": item["number"] ?? .null,
                            "_version": item["_version"] ?? .null,
                        ])
                }
            }
        }
    }

    /// Replaces the server's table (the drain's objects) with `options.rows` rows `r-…`, in one statement.
    private func seed() async throws {
        try await serverDatabase.execute("DELETE FROM Objects")
        let missing = options.rows
        progress("seeding \(missing) server rows")
        try await serverDatabase.execute(
            """
            WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
            INSERT INTO Objects (objectId, text, number, createdAt, updatedAt, _version, _deleted, _lastChangedAt)
            SELECT printf('r-%07d', i), 'text ' || i, i, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1, 0, 1
            FROM seq
            """, [missing])
    }
}
