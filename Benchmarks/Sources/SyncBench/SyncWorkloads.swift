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

    /// N writes of one object each, alone and with `steady(…, in: tx)`; rates in writes/s. The contenders take turns
    /// in `--chunks` slices of each round (2,000 writes take a tenth of a second: one turn each let single rounds
    /// spread from 0.61× to 0.92×).
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
            // In slices, the order turning A B C, C B A, C B A, A B C …, as the drain's goal takes turns.
            let slices = max(1, min(options.chunks, n))
            let contenders = ["sync", "plain", "row"]
            for part in 0..<slices {
                let order = (part + round + part / 2) % 2 == 0 ? contenders : contenders.reversed()
                let range = (n * part / slices)..<(n * (part + 1) / slices)
                for contender in order {
                    seconds[contender, default: 0] += try await timed {
                        for i in range {
                            try db.write { tx in
                                let object = BenchObject(objectId: "\(contender)-\(i)", text: "text \(i)", number: i)
                                try object.insert(tx)
                                switch contender {
                                case "sync":
                                    try engine.steady(
                                        "CreateObjects",
                                        ["objectId": object.objectId, "text": object.text, "number": i],
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
            }
            for contender in contenders {
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
    ///
    /// The 0.9× goal's two sides take turns in `--chunks` slices of N/chunks items each, in the order A B B A …:
    /// the machine's speed drifts over seconds, and one turn of 10,000 items per side left single rounds anywhere
    /// from 0.59× to 1.21×. One engine per round delivers its whole queue, opened inside the first slice's timing as
    /// before; a ``DeliveryGate`` that the server's authorization provider asks for the engine's requests (a
    /// task-local value its delivery task inherits) holds it before the first request of the next slice. The
    /// batches and the loop with a record per call run whole, after them.
    func drain(into table: inout ResultTable) async throws {
        var rates: [String: [Double]] = [:]
        let n = options.mutations
        let gate = DeliveryGate(budget: 0)
        // One server (one connection) for every contender: which event loop threads a connection's two ends land
        // on changes its speed, and a connection per side made a run's ratio depend on where each had landed.
        let client = GQLServer(HTTP: http, authorization: DeliveryGate.authorization)
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        let chunks = max(1, min(options.chunks, n))
        for round in 0...options.rounds {
            progress("drain round \(round)")
            var seconds: [String: Double] = [:]
            var usage: [String: ThreadUsage] = [:]
            // Every engine's items are queued (offline) before anything is timed, so no queueing comes between two
            // timed drains; their dirty pages are written back first, not during a timed delivery.
            for contender in ["single", "batched"] where options.contenders.contains(contender) {
                try await queue(
                    0..<n, prefix: "d\(round)-\(contender)-", into: outbox(round, contender), offline: offline)
            }
            flushToDisk()
            // The goal's sides (and keyed, the loop with the engine's header), slice by slice, A B B A.
            let paired = ["single", "loop", "keyed"].filter(options.contenders.contains)
            var engine: GQLSync?
            for part in 0..<chunks {
                let range = (n * part / chunks)..<(n * (part + 1) / chunks)
                let turn = (round + part + part / 2) % 2 == 0 ? paired : paired.reversed()
                for contender in turn {
                    let before = ThreadUsage.enabled ? ThreadUsage.now() : nil
                    // `BENCH_CALLGRIND=drain.single` (drain.loop, drain.batched …) counts the measured rounds.
                    let section = round > 0 ? "drain.\(contender)" : "warm-up"
                    PerfControl.enable()
                    CallgrindSection.start(section)
                    if contender == "single" {
                        seconds[contender, default: 0] += try await timed {
                            // The engine's delivery task inherits the task-local gate; the loop's calls see none.
                            let started =
                                try engine
                                ?? DeliveryGate.$current.withValue(gate) {
                                    try GQLSync(
                                        client, path: outbox(round, contender), configuration: configuration("drain"))
                                }
                            engine = started
                            if part == chunks - 1 {
                                gate.open(range.count)
                                try await started.drain()
                            } else {
                                await gate.run(range.count)
                            }
                        }
                    } else {
                        seconds[contender, default: 0] += try await loopDrain(
                            range, prefix: "d\(round)-\(contender)-", keyed: contender == "keyed", round: round,
                            client: client)
                    }
                    CallgrindSection.stop(section, operations: range.count)
                    PerfControl.disable()
                    if let before { usage[contender, default: ThreadUsage()].add(.now(), since: before) }
                }
            }
            if let engine { try await finish(engine, "single") }
            // The rest whole, in turn order.
            for contender in (round % 2 == 0 ? ["batched", "recorded"] : ["recorded", "batched"])
            where options.contenders.contains(contender) {
                let before = ThreadUsage.enabled ? ThreadUsage.now() : nil
                if contender == "recorded" {
                    let rate = try await recordedLoop("d\(round)-recorded-", round: round, client: client)
                    seconds[contender] = Double(n) / rate
                } else {
                    var engine: GQLSync?
                    let section = round > 0 ? "drain.\(contender)" : "warm-up"
                    PerfControl.enable()
                    CallgrindSection.start(section)
                    seconds[contender] = try await timed {
                        let started = try GQLSync(
                            client, path: outbox(round, contender), configuration: configuration("drain", batch: 50))
                        engine = started
                        try await started.drain()
                    }
                    CallgrindSection.stop(section, operations: n)
                    PerfControl.disable()
                    if let engine { try await finish(engine, contender) }
                }
                if let before { usage[contender, default: ThreadUsage()].add(.now(), since: before) }
            }
            for contender in ["single", "loop", "keyed", "batched", "recorded"] {
                guard let time = seconds[contender] else { continue }
                let rate = Double(n) / time
                progress("  \(contender) \(Int(rate)) mutations/s")
                for line in usage[contender]?.report(since: ThreadUsage(), items: n) ?? [] { progress(line) }
                let count = try serverCount("d\(round)-\(contender)-")
                guard count == n else {
                    throw BenchError("drain \(contender): the server has \(count) of \(n) objects")
                }
                if round > 0 { rates[contender, default: []].append(rate) }
            }
        }
        try await client.shutdown()
        try await offline.shutdown()
        let loop = rates["loop"] ?? []
        table.add(
            "drain \(n): one per request vs mutation loop", sync: rates["single"] ?? [], peer: loop,
            unit: "mutations/s", goal: 0.9)
        table.add(
            "drain \(n): batches of 50 vs mutation loop", sync: rates["batched"] ?? [], peer: loop, unit: "mutations/s",
            goal: 3)
        table.add(
            "drain \(n): one per request vs loop + a commit per call", sync: rates["single"] ?? [],
            peer: rates["recorded"] ?? [], unit: "mutations/s", goal: nil)
        table.add(
            "drain \(n): one per request vs loop + an Idempotency-Key header", sync: rates["single"] ?? [],
            peer: rates["keyed"] ?? [], unit: "mutations/s", goal: nil)
    }

    private func outbox(_ round: Int, _ contender: String) -> String { path("drain-\(round)-\(contender).sqlite") }

    /// Checks that the engine left nothing queued or failed, and shuts it down (not timed).
    private func finish(_ engine: GQLSync, _ contender: String) async throws {
        guard engine.pendingCount == 0, try engine.failedItems().isEmpty else {
            throw BenchError("drain \(contender): items left or failed")
        }
        try await engine.shutdown()
    }

    /// Queues the creates of `range` into the outbox file at `path`, with an engine whose server is a closed port.
    private func queue(_ range: Range<Int>, prefix: String, into path: String, offline: GQLServer) async throws {
        let queue = try GQLSync(offline, path: path, configuration: configuration("drain"))
        for i in range {
            try await queue.steady("CreateObjects", ["objectId": "\(prefix)\(i)", "text": "t", "number": i])
        }
        try await queue.shutdown()
    }

    /// Seconds a loop of `server.mutation` calls takes for the creates of `range`; with `keyed`, each call also
    /// sends an `Idempotency-Key` header as the engine does (a diagnosis, not a goal's peer).
    private func loopDrain(_ range: Range<Int>, prefix: String, keyed: Bool, round: Int, client: GQLServer)
        async throws -> Double
    {
        try await timed {
            for i in range {
                let result = try await client.mutation(
                    Self.create,
                    [
                        "input": GQLValue.object([
                            "objectId": .string("\(prefix)\(i)"), "text": "t", "number": .int(Int64(i)),
                        ])
                    ],
                    headers: keyed
                        ? ["Idempotency-Key": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-\(round)-\(String(i, radix: 16))"]
                        : [:])
                guard result.errors.isEmpty else { throw BenchError("loop: \(result.errors)") }
            }
        }
    }
}
