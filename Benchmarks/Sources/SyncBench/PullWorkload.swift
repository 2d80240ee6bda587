import BenchKit
import Foundation
import GQLStore
import GQLSync

extension SyncWorkloads {
    /// The server's `Objects` table brought to N rows, then paged (1,000 a page) into a fresh local file by
    /// `pull` and by hand; rates in rows/s.
    func pull(into table: inout ResultTable) async throws {
        try await seed()
        let expected = try serverDatabase.count("Objects")
        let expectedSum = try serverDatabase.fetchRows(sql: "SELECT total(number) FROM Objects").rows.first?.first
        let client = GQLServer(HTTP: http)
        var sync: [Double] = []
        var peer: [Double] = []
        for round in 0...options.rounds {
            progress("pull round \(round)")
            var rates: [String: Double] = [:]
            let order = round % 2 == 0 ? ["sync", "dictionary", "codable"] : ["codable", "dictionary", "sync"]
            for contender in order {
                let db = try GQLDatabase(path: path("pull-\(round)-\(contender).sqlite"))
                try db.register(BenchObject.self)
                // The previous contender's 100,000 rows are written back now, not during this one's pull.
                flushToDisk()
                let seconds: Double
                switch contender {
                case "sync":
                    let engine = try GQLSync(client, database: db, configuration: configuration("pull"))
                    seconds = try await timed {
                        let report = try await engine.pull(BenchObject.self, query: "SyncObjects", base: true)
                        guard report.written == expected else { throw BenchError("pull wrote \(report.written)") }
                    }
                    try await engine.shutdown()
                default:
                    let text = try configuration("unused").queries.document(named: "SyncObjects").text
                    seconds = try await timed { try await byHand(text, into: db, codable: contender == "codable") }
                }
                let sum = try db.fetchRows(sql: "SELECT total(number) FROM Objects").rows.first?.first
                guard try BenchObject.count(db) == expected, sum == expectedSum else {
                    throw BenchError("pull \(contender): the local rows differ from the server's")
                }
                try await db.close()
                rates[contender] = Double(expected) / seconds
                progress("  \(contender) \(Int(Double(expected) / seconds)) rows/s")
            }
            if round > 0 {
                sync.append(rates["sync"] ?? 0)
                peer.append(max(rates["dictionary"] ?? 0, rates["codable"] ?? 0))
            }
        }
        try await client.shutdown()
        table.add("pull \(expected) rows vs pages inserted by hand", sync: sync, peer: peer, unit: "rows/s", goal: 0.9)
    }

    /// What an app writes without GQLSync: fetch each page, write its items in one transaction.
    private func byHand(_ text: String, into db: GQLDatabase, codable: Bool) async throws {
        let client = GQLServer(HTTP: http)
        defer { Task { try? await client.shutdown() } }
        var nextToken: String?
        repeat {
            var variables: [String: any GQLValueConvertible] = ["limit": 1000]
            if let nextToken { variables["nextToken"] = nextToken }
            let result = try await client.query(text, variables)
            guard result.errors.isEmpty, let page = result.data?["syncObjects"], let items = page["items"]?.arrayValue
            else { throw BenchError("by hand: a page failed: \(result.errors)") }
            nextToken = page["nextToken"]?.stringValue
            if codable {
                let objects = try GQLValue.array(items).decode([BenchObject].self)
                try await db.write { tx in
                    for object in objects { try object.insertUpdate(tx) }
                }
            } else {
                try await db.write { tx in
                    for item in items {
                        guard let key = item["objectId"] else { continue }
                        if item["_deleted"]?.boolValue == true {
                            try tx.deleteOne("Objects", key: key)
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
        } while nextToken != nil
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
