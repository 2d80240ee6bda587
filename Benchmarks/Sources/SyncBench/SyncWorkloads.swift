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
    static let create = "mutation CreateObjects($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }"

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
        // An engine whose server is a closed port: it stays offline, so sending never competes with the writes.
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        for round in 0...options.rounds {
            progress("enqueue round \(round)")
            let db = try GQLDatabase(path: path("enqueue-\(round).sqlite"))
            try db.register(BenchObject.self)
            let engine = try GQLSync(offline, database: db, configuration: configuration("enqueue"))
            let n = options.writes
            let runSync = {
                try await timed {
                    for i in 0..<n {
                        try db.write { tx in
                            let object = BenchObject(objectId: "s-\(i)", text: "text \(i)", number: i)
                            try object.insert(tx)
                            try engine.steady("CreateObjects", ["objectId": object.objectId, "text": object.text, "number": i], object.objectId, in: tx)
                        }
                    }
                }
            }
            let runPlain = {
                try await timed {
                    for i in 0..<n {
                        try db.write { tx in
                            try BenchObject(objectId: "p-\(i)", text: "text \(i)", number: i).insert(tx)
                        }
                    }
                }
            }
            let (s, p) = round % 2 == 0 ? (try await runSync(), try await runPlain()) : swapped(try await runPlain(), try await runSync())
            guard try BenchObject.count(db, "objectId LIKE 's-%'") == n, try BenchObject.count(db, "objectId LIKE 'p-%'") == n,
                engine.pendingCount == n
            else { throw BenchError("enqueue: the rows or the queued items are not all there") }
            try await engine.shutdown()
            try await db.close()
            progress("  steady(in: tx) \(Int(Double(n) / s)) writes/s, plain \(Int(Double(n) / p)) writes/s")
            if round > 0 {
                sync.append(Double(n) / s)
                plain.append(Double(n) / p)
            }
        }
        try await offline.shutdown()
        table.add("enqueue: write + steady(in: tx) vs write", sync: sync, peer: plain, unit: "writes/s", goal: 1 / 1.5)
    }

    private func swapped(_ a: Double, _ b: Double) -> (Double, Double) { (b, a) }

    // MARK: Drain

    /// N queued creates delivered by the engine (one per request, and 50 per request) vs a loop of mutations.
    func drain(into table: inout ResultTable) async throws {
        var single: [Double] = []
        var batched: [Double] = []
        var loop: [Double] = []
        var recorded: [Double] = []
        let n = options.mutations
        let client = GQLServer(HTTP: http)
        let offline = GQLServer(HTTP: "http://127.0.0.1:1/graphql")
        for round in 0...options.rounds {
            progress("drain round \(round)")
            var rates: [String: Double] = [:]
            let order =
                round % 2 == 0 ? ["single", "batched", "loop", "recorded"] : ["recorded", "loop", "batched", "single"]
            for contender in order where options.contenders.contains(contender) {
                let prefix = "d\(round)-\(contender)-"
                if contender == "recorded" {
                    rates[contender] = try await recordedLoop(prefix, round: round, client: client)
                } else if contender == "loop" {
                    let seconds = try await timed {
                        for i in 0..<n {
                            let result = try await client.mutation(
                                Self.create, ["input": GQLValue.object(["objectId": .string("\(prefix)\(i)"), "text": "t", "number": .int(Int64(i))])])
                            guard result.errors.isEmpty else { throw BenchError("loop: \(result.errors)") }
                        }
                    }
                    rates[contender] = Double(n) / seconds
                } else {
                    let outbox = path("drain-\(round)-\(contender).sqlite")
                    let batch = contender == "batched" ? 50 : 1
                    // Queued while offline, then delivered by an engine on the same outbox: only delivery is timed.
                    let queue = try GQLSync(offline, path: outbox, configuration: configuration("drain", batch: batch))
                    for i in 0..<n {
                        try await queue.steady("CreateObjects", ["objectId": "\(prefix)\(i)", "text": "t", "number": i])
                    }
                    try await queue.shutdown()
                    // The queueing's dirty pages are written back now, not during the timed delivery.
                    flushToDisk()
                    var engine: GQLSync?
                    let seconds = try await timed {
                        let started = try GQLSync(client, path: outbox, configuration: configuration("drain", batch: batch))
                        engine = started
                        try await started.drain()
                    }
                    guard let engine, engine.pendingCount == 0, try engine.failedItems().isEmpty else {
                        throw BenchError("drain \(contender): items left or failed")
                    }
                    try await engine.shutdown()
                    rates[contender] = Double(n) / seconds
                }
                progress("  \(contender) \(Int(rates[contender] ?? 0)) mutations/s")
                guard try serverCount(prefix) == n else {
                    throw BenchError("drain \(contender): the server has \(try serverCount(prefix)) of \(n) objects")
                }
            }
            if round > 0 {
                if let rate = rates["single"] { single.append(rate) }
                if let rate = rates["batched"] { batched.append(rate) }
                if let rate = rates["loop"] { loop.append(rate) }
                if let rate = rates["recorded"] { recorded.append(rate) }
            }
        }
        try await client.shutdown()
        try await offline.shutdown()
        table.add("drain \(n): one per request vs mutation loop", sync: single, peer: loop, unit: "mutations/s", goal: 0.9)
        table.add("drain \(n): batches of 50 vs mutation loop", sync: batched, peer: loop, unit: "mutations/s", goal: 3)
        table.add(
            "drain \(n): one per request vs loop + a commit per call", sync: single, peer: recorded, unit: "mutations/s",
            goal: nil)
    }
}
