import AsyncHTTPClient
import BenchKit
import Foundation
import GQLNet
import NIOCore

/// Query round trips per second: `getObjects(objectId:)` through `GQLServer.query` against AsyncHTTPClient posting
/// the byte-identical body and decoding the answer with the same JSON parser (`GQLValue(json:)`), plus a second raw
/// contender decoding with Foundation's `JSONSerialization`. Each answer is checked (status 200, no `errors`, the
/// object asked for), sequentially and with `clients` concurrent tasks on one shared client.
struct QueryLoad {
    let http: String
    let options: NetBench.Options

    static let query = "query Get($id: ID!) { getObjects(objectId: $id) { objectId text number double boolean } }"
    static let seeded = 100

    /// One way of running a query: returns whether the answer was right.
    typealias Contender = @Sendable (_ key: String) async -> Bool

    func run(into table: inout Table) async throws {
        let server = GQLServer(HTTP: http)
        let raw = RawHTTP(url: http, gqlServerConfiguration: false)
        let rawConfigured = RawHTTP(url: http, gqlServerConfiguration: true)
        do {
            try await measure(server: server, raw: raw, rawConfigured: rawConfigured, into: &table)
        } catch {
            try? await server.shutdown()
            try? await raw.client.shutdown()
            try? await rawConfigured.client.shutdown()
            throw error
        }
        try await server.shutdown()
        try await raw.client.shutdown()
        try await rawConfigured.client.shutdown()
    }

    private func measure(
        server: GQLServer, raw: RawHTTP, rawConfigured: RawHTTP, into table: inout Table
    ) async throws {
        progress("query: seeding \(Self.seeded) objects")
        for index in 0..<Self.seeded {
            let result = try await server.mutation(
                "mutation Create($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
                [
                    "input": GQLValue.object([
                        "objectId": .string("seed-\(index)"), "text": .string("benchmark object \(index)"),
                        "number": .int(Int64(index)), "double": .double(Double(index) / 4),
                        "boolean": .bool(index % 2 == 0),
                    ])
                ])
            guard result.errors.isEmpty else { throw BenchError("seeding failed: \(result.errors)") }
        }
        // The raw body must be the bytes GQLServer sends (GQLValue's writer sorts keys).
        let expected = try GQLValue.object(["query": .string(Self.query), "variables": ["id": "seed-1"]]).jsonString()
        guard raw.body("seed-1") == expected else {
            throw BenchError("the raw body differs from GQLServer's:\n\(raw.body("seed-1"))\n\(expected)")
        }

        let gqlnet: Contender = { key in
            do {
                let result = try await server.query(Self.query, ["id": key])
                return result.errors.isEmpty && result.data?.objectValue?.count == 1
                    && Self.isSeeded(result.data?["getObjects"], key)
            } catch {
                return false
            }
        }
        var contenders: [(String, Contender)] = [
            ("GQLServer", gqlnet),
            ("raw AHC + GQLValue", { key in await raw.query(key) }),
            ("raw AHC + JSONSerialization", { key in await raw.query(key, parser: .foundation) }),
        ]
        if options.diagnose {
            let configured: Contender = { key in await rawConfigured.query(key) }
            let raced: Contender = { key in await raw.query(key, timeoutRace: true) }
            let encoded: Contender = { key in await raw.query(key, valueBody: true) }
            let all: Contender = { key in await rawConfigured.query(key, timeoutRace: true, valueBody: true) }
            contenders += [
                ("raw + GQLServer's client configuration", configured), ("raw + timeout race", raced),
                ("raw + GQLValue body and byte copies", encoded), ("raw + all three", all),
            ]
        }

        for clients in [1, options.clients] {
            progress("query: \(clients) client(s), warm-up")
            for (_, contender) in contenders {
                _ = await Self.measure(queries: options.queries / 2, clients: clients, contender)
            }
            var runs = Array(repeating: [Measurement](), count: contenders.count)
            // A round is cut into slices of about `sliceSize` queries, the contenders taking turns slice by slice
            // (in alternating order), so that bursts of other work on the machine fall on all of them alike.
            let slices = max(1, options.queries / Self.sliceSize)
            for round in 0..<options.rounds {
                var sums = Array(repeating: Measurement.zero, count: contenders.count)
                for slice in 0..<slices {
                    let order = (round + slice) % 2 == 0 ? Array(contenders.indices) : contenders.indices.reversed()
                    for index in order {
                        // `BENCH_CALLGRIND=query.gqlserver.1` (query.raw.1, query.gqlserver.16 …) counts one contender.
                        let section = "query.\(Self.sections[min(index, 3)]).\(clients)"
                        CallgrindSection.start(section)
                        let measured = await Self.measure(
                            queries: options.queries / slices, clients: clients, contenders[index].1)
                        CallgrindSection.stop(section, operations: measured.queries)
                        sums[index].add(measured)
                    }
                }
                for index in contenders.indices { runs[index].append(sums[index]) }
                progress(
                    "query: \(clients) client(s), round \(round + 1): "
                        + contenders.indices.map {
                            "\(contenders[$0].0) \(Int(runs[$0].last?.perSecond ?? 0))/s "
                                + String(format: "%.0f µs CPU", runs[$0].last?.cpuMicroseconds ?? 0)
                        }
                        .joined(separator: ", "))
            }
            let label = clients == 1 ? "queries/s, 1 client (sequential)" : "queries/s, \(clients) clients"
            func paired(_ a: Int, _ b: Int, _ value: (Measurement) -> Double) -> [Double] {
                Statistics.ratios(runs[a].map(value), runs[b].map(value))
            }
            let rate = runs.map { median($0.map(\.perSecond)) }
            let cpu = runs.map { median($0.map(\.cpuMicroseconds)) }
            table.add(
                .init(label: label, gqlnet: rate[0], raw: rate[1], target: 0.9, pairedRatios: paired(0, 1, \.perSecond))
            )
            table.add(
                .init(
                    label: "  CPU µs per query (whole process)", gqlnet: cpu[0], raw: cpu[1], lowerIsBetter: true,
                    pairedRatios: paired(1, 0, \.cpuMicroseconds)))
            table.add(
                .init(
                    label: "  vs raw decoding with JSONSerialization", gqlnet: rate[0], raw: rate[2],
                    pairedRatios: paired(0, 2, \.perSecond)))
            for index in contenders.indices.dropFirst(3) {
                table.note(
                    "diagnosis, \(label): \(contenders[index].0) "
                        + String(
                            format: "%.0f/s, %.0f µs CPU per query, %.2f× raw AHC + GQLValue", rate[index], cpu[index],
                            median(paired(index, 1, \.perSecond))))
            }
            if options.verbose {
                for (index, contender) in contenders.enumerated() {
                    table.note(
                        "\(label), \(contender.0): "
                            + runs[index].map { String(format: "%.0f/s %.0f µs", $0.perSecond, $0.cpuMicroseconds) }
                            .joined(separator: ", "))
                }
            }
            let failures = runs.joined().map(\.failures).reduce(0, +)
            if failures > 0 {
                table.failed = true
                table.note("\(label): \(failures) wrong or failed answers")
            }
        }
        table.note(
            "queries: \(options.queries) per round and contender, in slices of \(Self.sliceSize) taking turns, getObjects of one of \(Self.seeded) seeded objects "
                + "(5 fields, ~170-byte answer); raw = AsyncHTTPClient 1.37.0 with its default configuration, the "
                + "same body bytes and Content-Type/Accept headers; every answer checked whole (no errors, the 5 "
                + "seeded fields and values); CPU = the whole process "
                + "(client and server) per query")
    }

    /// The fields `seed-N` was seeded with: `getObjects`'s answer for `key`, exactly (those five fields, those values).
    static func isSeeded(_ object: GQLValue?, _ key: String) -> Bool {
        guard let fields = object?.objectValue, fields.count == 5, let index = seededIndex(key) else { return false }
        return fields["objectId"]?.stringValue == key && fields["text"]?.stringValue == "benchmark object \(index)"
            && fields["number"]?.intValue == Int64(index) && fields["double"]?.doubleValue == Double(index) / 4
            && fields["boolean"]?.boolValue == (index % 2 == 0)
    }

    /// The same check on Foundation's `JSONSerialization` result.
    static func isSeeded(_ object: [String: Any], _ key: String) -> Bool {
        guard object.count == 5, let index = seededIndex(key) else { return false }
        return object["objectId"] as? String == key && object["text"] as? String == "benchmark object \(index)"
            && (object["number"] as? NSNumber)?.intValue == index
            && (object["double"] as? NSNumber)?.doubleValue == Double(index) / 4
            && (object["boolean"] as? Bool) == (index % 2 == 0)
    }

    /// N of `seed-N`.
    static func seededIndex(_ key: String) -> Int? {
        key.hasPrefix("seed-") ? Int(key.dropFirst(5)) : nil
    }

    /// One round of one contender.
    struct Measurement {
        var queries = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var failures = 0

        static let zero = Measurement()
        var perSecond: Double { seconds > 0 ? Double(queries) / seconds : 0 }
        var cpuMicroseconds: Double { queries > 0 ? cpuSeconds / Double(queries) * 1e6 : 0 }

        mutating func add(_ other: Measurement) {
            queries += other.queries
            seconds += other.seconds
            cpuSeconds += other.cpuSeconds
            failures += other.failures
        }
    }

    /// The contenders' names in callgrind sections (`query.<name>.<clients>`), the diagnostic ones sharing one.
    static let sections = ["gqlserver", "raw", "foundation", "diagnosis"]

    /// Queries per contender between two turns of the next contender.
    static let sliceSize = 250

    /// Queries per second over `queries` round trips made by `clients` concurrent tasks, the process's CPU time
    /// per query, and the failures.
    static func measure(queries: Int, clients: Int, _ contender: @escaping Contender) async -> Measurement {
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = processCPUSeconds()
        let perClient = max(1, queries / clients)
        let failures = await withTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var failed = 0
                    for index in 0..<perClient {
                        let key = "seed-\((client * 7 + index) % seeded)"
                        if await !contender(key) { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        return Measurement(
            queries: perClient * clients, seconds: (clock.now - start).seconds,
            cpuSeconds: processCPUSeconds() - cpuStart, failures: failures)
    }
}
