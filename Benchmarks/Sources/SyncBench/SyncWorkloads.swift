import BenchKit
import Foundation
import GQLStore
import GQLSync

/// The app's copy of the dev server's default `Objects` model.
struct BenchObject: GQLObject {
    var objectId = ""
    var text: String?
    var number: Int?
    var _version: Int?
    static func primaryKey() -> String { "objectId" }
    static func tableName() -> String { "Objects" }
}

/// The three workloads; each round runs GQLSync and its peer back to back, alternating which goes first.
struct SyncWorkloads {
    let http: String
    let serverDatabase: GQLDatabase
    let directory: URL
    let options: SyncBench.Options

    static let operations = """
        mutation CreateObjects($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }
        query SyncObjects($limit: Int, $nextToken: String, $lastSync: AWSTimestamp) {
          syncObjects(limit: $limit, nextToken: $nextToken, lastSync: $lastSync) {
            items { objectId text number _version _deleted } nextToken startedAt
          }
        }
        """
    static let create =
        "mutation CreateObjects($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }"

    func configuration(_ name: String, batch: Int = 1) throws -> GQLSync.Configuration {
        let queries = GQLQuery()
        try queries.load(Self.operations, sourceName: "SyncBench")
        var configuration = GQLSync.Configuration()
        configuration.name = name
        configuration.queries = queries
        configuration.inputArgument = "input"
        configuration.batchSize = batch
        configuration.pullPageSize = 1000
        return configuration
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func serverCount(_ prefix: String) throws -> Int {
        try serverDatabase.count("Objects", "objectId LIKE ?", [prefix + "%"])
    }

    // MARK: Enqueue

    /// N writes of one object each, alone and with `steady(…, in: tx)`; rates in writes/s.
    func enqueue(into table: inout ResultTable) async throws {
        var sync: [Double] = []
        var plain: [Double] = []
        var row: [Double] = []
        // An engine whose server is a closed port: it stays offline, so sending never competes with the writes.
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        for round in 0...options.rounds {
            progress("enqueue round \(round)")
            let db = try GQLDatabase(path: path("enqueue-\(round).sqlite"))
            try db.register(BenchObject.self)
            try await db.execute(Self.handmadeOutbox)
            let engine = try GQLSync(offline, database: db, configuration: configuration("enqueue"))
            let n = options.writes
            var seconds: [String: Double] = [:]
            let order = round % 2 == 0 ? ["sync", "plain", "row"] : ["row", "plain", "sync"]
            for contender in order {
                seconds[contender] = try await timed {
                    for i in 0..<n {
                        try db.write { tx in
                            let object = BenchObject(objectId: "\(contender)-\(i)", text: "text \(i)", number: i)
                            try object.insert(tx)
                            switch contender {
                            case "sync":
                                try engine.steady(
                                    "CreateObjects", ["objectId": object.objectId, "text": object.text, "number": i],
                                    object.objectId, in: tx)
                            case "row":
                                // The floor: a row of the same size in a table of its own, by a cached statement.
                                _ = try tx.fetchAll(
                                    sql: Self.handmadeInsert,
                                    [
                                        "\"\(object.objectId)\"",
                                        "{\"number\":\(i),\"objectId\":\"\(object.objectId)\",\"text\":\"text \(i)\"}",
                                        Int64(bitPattern: 0x9E37_79B9_7F4A_7C15 &* UInt64(i + 1)),
                                        1_764_167_077_123 + i,
                                    ])
                            default: break
                            }
                        }
                    }
                }
            }
            for contender in order {
                guard try BenchObject.count(db, "objectId LIKE ?", ["\(contender)-%"]) == n else {
                    throw BenchError("enqueue: the \(contender) rows are not all there")
                }
            }
            guard engine.pendingCount == n, try db.count("handmade_outbox") == n else {
                throw BenchError("enqueue: the queued items are not all there")
            }
            try await engine.shutdown()
            try await db.close()
            let rate = { (contender: String) in Double(n) / (seconds[contender] ?? .infinity) }
            progress(
                "  steady(in: tx) \(Int(rate("sync"))) writes/s, plain \(Int(rate("plain"))) writes/s, "
                    + "same row by hand \(Int(rate("row"))) writes/s")
            if round > 0 {
                sync.append(rate("sync"))
                plain.append(rate("plain"))
                row.append(rate("row"))
            }
        }
        try await offline.shutdown()
        table.add("enqueue: write + steady(in: tx) vs write", sync: sync, peer: plain, unit: "writes/s", goal: 1 / 1.5)
        table.add(
            "enqueue: write + steady(in: tx) vs write + the same row by hand", sync: sync, peer: row, unit: "writes/s",
            goal: nil)
        let floor = Statistics.spread(Statistics.ratios(row, plain))
        progress("enqueue floor: write + the same row by hand vs write \(floor)")
        table.notes.append("enqueue floor (no GQLSync): write + the same row by hand vs write: \(floor)")
    }

    /// A table shaped like GQLSync's outbox (its layout since outbox step 6: the operation by id, a 64-bit
    /// nonce for the idempotency key, the date in milliseconds), for the enqueue's floor.
    static let handmadeOutbox = """
        CREATE TABLE handmade_outbox (id INTEGER PRIMARY KEY, engine TEXT NOT NULL, mode TEXT NOT NULL,
            op INTEGER NOT NULL, key TEXT, input TEXT NOT NULL, idempotency TEXT, nonce INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT 'pending', error TEXT,
            created_at INTEGER NOT NULL, failed_at TEXT)
        """
    static let handmadeInsert = """
        INSERT INTO handmade_outbox (engine, mode, op, key, input, nonce, created_at)
        VALUES ('enqueue', 'steady', 1, ?, ?, ?, ?)
        """

    // MARK: Drain

    /// N queued creates delivered by the engine (one per request, and 50 per request) vs a loop of mutations.
    func drain(into table: inout ResultTable) async throws {
        var single: [Double] = []
        var batched: [Double] = []
        var loop: [Double] = []
        var recorded: [Double] = []
        var keyed: [Double] = []
        let n = options.mutations
        let client = GQLServer(HTTP: http)
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        for round in 0...options.rounds {
            progress("drain round \(round)")
            var rates: [String: Double] = [:]
            // Each goal's two sides run back to back (the machine's speed drifts over seconds): the engine one per
            // request beside the loop, the batches beside them; the order turns round every round.
            let order =
                round % 2 == 0
                ? ["single", "loop", "batched", "recorded", "keyed"]
                : ["keyed", "recorded", "batched", "loop", "single"]
            // Every engine's items are queued (offline) before anything is timed, so no queueing comes between two
            // timed drains; its dirty pages are written back first, not during a timed delivery.
            for contender in ["single", "batched"] where options.contenders.contains(contender) {
                let queue = try GQLSync(
                    offline, path: path("drain-\(round)-\(contender).sqlite"),
                    configuration: configuration("drain", batch: contender == "batched" ? 50 : 1))
                for i in 0..<n {
                    try await queue.steady(
                        "CreateObjects", ["objectId": "d\(round)-\(contender)-\(i)", "text": "t", "number": i])
                }
                try await queue.shutdown()
            }
            flushToDisk()
            for contender in order where options.contenders.contains(contender) {
                let prefix = "d\(round)-\(contender)-"
                var usage: ThreadUsage?
                var usageEnd: ThreadUsage?
                if contender == "recorded" {
                    rates[contender] = try await recordedLoop(prefix, round: round, client: client)
                } else if contender == "loop" || contender == "keyed" {
                    // keyed: the same loop with the engine's per-request header (a diagnosis, not a goal's peer).
                    let keyed = contender == "keyed"
                    if ThreadUsage.enabled { usage = .now() }
                    PerfControl.enable()
                    let seconds = try await timed {
                        for i in 0..<n {
                            let result = try await client.mutation(
                                Self.create,
                                [
                                    "input": GQLValue.object([
                                        "objectId": .string("\(prefix)\(i)"), "text": "t", "number": .int(Int64(i)),
                                    ])
                                ],
                                headers: keyed
                                    ? [
                                        "Idempotency-Key":
                                            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-\(round)-\(String(i, radix: 16))"
                                    ] : [:])
                            guard result.errors.isEmpty else { throw BenchError("\(contender): \(result.errors)") }
                        }
                    }
                    PerfControl.disable()
                    if ThreadUsage.enabled { usageEnd = .now() }
                    rates[contender] = Double(n) / seconds
                } else {
                    let outbox = path("drain-\(round)-\(contender).sqlite")
                    let batch = contender == "batched" ? 50 : 1
                    // Queued while offline at the round's start; delivered by an engine on the same outbox.
                    var engine: GQLSync?
                    if ThreadUsage.enabled { usage = .now() }
                    PerfControl.enable()
                    var opening = 0.0
                    let seconds = try await timed {
                        let opened = ContinuousClock.now
                        let started = try GQLSync(
                            client, path: outbox, configuration: configuration("drain", batch: batch))
                        opening = Double((ContinuousClock.now - opened).components.attoseconds) / 1e18
                        engine = started
                        try await started.drain()
                    }
                    if ThreadUsage.enabled {
                        progress(String(format: "    opening the engine (timed too): %.1f ms", opening * 1000))
                    }
                    PerfControl.disable()
                    if ThreadUsage.enabled { usageEnd = .now() }
                    guard let engine, engine.pendingCount == 0, try engine.failedItems().isEmpty else {
                        throw BenchError("drain \(contender): items left or failed")
                    }
                    try await engine.shutdown()
                    rates[contender] = Double(n) / seconds
                }
                progress("  \(contender) \(Int(rates[contender] ?? 0)) mutations/s")
                if let usage, let usageEnd {
                    for line in usageEnd.report(since: usage, items: n) { progress(line) }
                }
                guard try serverCount(prefix) == n else {
                    throw BenchError("drain \(contender): the server has \(try serverCount(prefix)) of \(n) objects")
                }
            }
            if round > 0 {
                if let rate = rates["single"] { single.append(rate) }
                if let rate = rates["batched"] { batched.append(rate) }
                if let rate = rates["loop"] { loop.append(rate) }
                if let rate = rates["recorded"] { recorded.append(rate) }
                if let rate = rates["keyed"] { keyed.append(rate) }
            }
        }
        try await client.shutdown()
        try await offline.shutdown()
        table.add(
            "drain \(n): one per request vs mutation loop", sync: single, peer: loop, unit: "mutations/s", goal: 0.9)
        table.add("drain \(n): batches of 50 vs mutation loop", sync: batched, peer: loop, unit: "mutations/s", goal: 3)
        table.add(
            "drain \(n): one per request vs loop + a commit per call", sync: single, peer: recorded,
            unit: "mutations/s",
            goal: nil)
        table.add(
            "drain \(n): one per request vs loop + an Idempotency-Key header", sync: single, peer: keyed,
            unit: "mutations/s", goal: nil)
    }
}
