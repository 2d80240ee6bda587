import BenchKit
import Foundation
import GQLDevServer
import GQLNet
import Logging
import Synchronization
import WSClient

/// Subscription events per second: one `onCreateObjects` subscription, a burst of `events` rows inserted into the
/// server's database in one transaction (GQLDevServer publishes every committed insert), received through
/// `GQLServer.subscription` or through a WSClient speaking graphql-transport-ws itself and decoding every message
/// with `GQLValue(json:)`. The rate is events ÷ (COMMIT of the burst → last event received): delivery only starts
/// at COMMIT, and the insert itself is the same work for both contenders.
struct SubscriptionLoad {
    let endpoints: GQLDevServer.Endpoints
    let database: GQLDatabase
    let options: NetBench.Options

    static let subscription = "subscription OnCreate { onCreateObjects { objectId text number } }"

    /// What one burst, or the sum of a round's bursts, measured.
    struct Round {
        var events = 0
        var received = 0
        /// Events of the burst whose fields were not the inserted row's, or that came twice.
        var wrong = 0
        /// COMMIT → last event.
        var seconds = 0.0
        /// The process's CPU time (client and server) over the same span.
        var cpuSeconds = 0.0
        var insertSeconds = 0.0

        var perSecond: Double { seconds > 0 ? Double(received) / seconds : 0 }
        var cpuMicroseconds: Double { received > 0 ? cpuSeconds / Double(received) * 1e6 : 0 }

        mutating func add(_ other: Round) {
            events += other.events
            received += other.received
            wrong += other.wrong
            seconds += other.seconds
            cpuSeconds += other.cpuSeconds
            insertSeconds += other.insertSeconds
        }
    }

    /// Events per burst: a round's events go out in bursts of this size, the contenders taking turns burst by
    /// burst, so that other work on the machine falls on both alike.
    static let burstSize = 5000

    enum Contender: CaseIterable {
        case gqlnet, raw
        /// Diagnosis: the raw client handing each decoded message to a consumer task through an
        /// `AsyncThrowingStream`, as GQLServer does between its socket reader and the caller's loop.
        case rawStream

        var name: String {
            switch self {
            case .gqlnet: "GQLServer.subscription"
            case .raw: "raw WSClient + GQLValue"
            case .rawStream: "raw + AsyncThrowingStream hop"
            }
        }
    }

    /// Counts and checks one round's events; shared by the consumer and the driver.
    final class Counter: Sendable {
        struct State {
            var warmed = false
            var count = 0
            var wrong = 0
            var seen: [Bool]
            var last: ContinuousClock.Instant?
        }

        let state: Mutex<State>
        let prefix: String
        let target: Int

        init(prefix: String, target: Int) {
            self.prefix = prefix
            self.target = target
            state = Mutex(State(seen: Array(repeating: false, count: target)))
        }

        /// Checks an event's `onCreateObjects` object against the row inserted with its key (`objectId`, `text`
        /// and `number`, nothing else, each key once) and counts it; returns true once every event of the burst
        /// has arrived right.
        func received(_ object: GQLValue?) throws -> Bool {
            let now = ContinuousClock.now
            guard let key = object?["objectId"]?.stringValue else {
                throw BenchError("an event without objectId: \(object.map { "\($0)" } ?? "nil")")
            }
            if key.hasPrefix("warm-") {
                state.withLock { $0.warmed = true }
                return false
            }
            guard key.hasPrefix(prefix) else { return false }  // a warm-up row's event of an earlier subscriber
            let index = Int(key.dropFirst(prefix.count)) ?? -1
            let right =
                (0..<target).contains(index) && object?.objectValue?.count == 3
                && object?["text"]?.stringValue == "event \(index)" && object?["number"]?.intValue == Int64(index)
            return state.withLock { state in
                if right, !state.seen[index] {
                    state.seen[index] = true
                    state.count += 1
                    state.last = now
                } else {
                    state.wrong += 1
                }
                return state.count >= target
            }
        }

        var snapshot: State { state.withLock { $0 } }
    }

    func run(into table: inout Table) async throws {
        var rounds: [Contender: [Round]] = [:]
        let contenders = options.diagnose ? Contender.allCases : [.gqlnet, .raw]
        progress("subscription: warm-up")
        for contender in contenders {
            _ = try await round(contender, label: "w\(contender)", events: max(1, options.events / 4))
        }
        let bursts = max(1, options.events / Self.burstSize)
        for index in 0..<options.rounds {
            var sums: [Contender: Round] = [:]
            for burst in 0..<bursts {
                let order = (index + burst) % 2 == 0 ? contenders : contenders.reversed()
                for contender in order {
                    sums[contender, default: Round()].add(
                        try await round(
                            contender, label: "r\(index)b\(burst)\(contender)", events: options.events / bursts))
                }
            }
            var line: [String] = []
            for contender in contenders {
                let result = sums[contender] ?? Round()
                rounds[contender, default: []].append(result)
                line.append(
                    "\(contender.name) \(Int(result.perSecond))/s "
                        + String(format: "%.1f µs CPU", result.cpuMicroseconds)
                        + " (insert \(Int(result.insertSeconds * 1000)) ms)")
                if result.received < result.events || result.wrong > 0 {
                    table.failed = true
                    table.note(
                        "subscription round \(index + 1), \(contender.name): \(result.received) of \(result.events) "
                            + "events right, \(result.wrong) wrong or repeated")
                }
            }
            progress("subscription: round \(index + 1): " + line.joined(separator: ", "))
        }
        func figure(_ contender: Contender, _ value: (Round) -> Double) -> Double {
            median(rounds[contender, default: []].map(value))
        }
        func paired(_ a: Contender, _ b: Contender, _ value: (Round) -> Double) -> [Double] {
            Statistics.ratios(rounds[a, default: []].map(value), rounds[b, default: []].map(value))
        }
        table.add(
            .init(
                label: "subscription events/s", gqlnet: figure(.gqlnet, \.perSecond), raw: figure(.raw, \.perSecond),
                target: 0.9, pairedRatios: paired(.gqlnet, .raw, \.perSecond)))
        table.add(
            .init(
                label: "  CPU µs per event (whole process)", gqlnet: figure(.gqlnet, \.cpuMicroseconds),
                raw: figure(.raw, \.cpuMicroseconds), format: "%.1f", lowerIsBetter: true,
                pairedRatios: paired(.raw, .gqlnet, \.cpuMicroseconds)))
        if options.diagnose {
            table.note(
                "diagnosis, subscription: \(Contender.rawStream.name) "
                    + String(
                        format: "%.0f/s, %.1f µs CPU per event, %.2f× raw", figure(.rawStream, \.perSecond),
                        figure(.rawStream, \.cpuMicroseconds), median(paired(.rawStream, .raw, \.perSecond))))
        }
        let insert =
            median((rounds[.gqlnet, default: []] + rounds[.raw, default: []]).map(\.insertSeconds)) / Double(bursts)
        table.note(
            "subscription: \(options.events) events per round and contender, in bursts of \(options.events / bursts) "
                + "taking turns, each inserted in one transaction with the dictionary API (median "
                + "\(Int(insert * 1000)) ms per burst, not timed); rate = events ÷ (COMMIT → last event); "
                + "`onCreateObjects { objectId text number }`, every event checked against its row (the 3 fields, each "
                + "key once)")
        if options.verbose {
            for contender in contenders {
                table.note(
                    "subscription, \(contender.name): "
                        + (rounds[contender] ?? []).map { String(format: "%.0f", $0.perSecond) }.joined(separator: ", ")
                )
            }
        }
    }

    /// One subscriber, warmed up until live, then one burst of `events` inserts.
    private func round(_ contender: Contender, label: String, events: Int) async throws -> Round {
        let counter = Counter(prefix: "ev-\(label)-", target: events)
        let consumer: Task<Void, any Error>
        switch contender {
        case .gqlnet: consumer = Task { try await Self.consumeGQLServer(endpoints.webSocket, counter) }
        case .raw: consumer = Task { try await Self.consumeRaw(endpoints.webSocket, counter) }
        case .rawStream: consumer = Task { try await Self.consumeRawThroughStream(endpoints.webSocket, counter) }
        }
        defer { consumer.cancel() }

        // The subscription is live a moment after `subscribe` (graphql-transport-ws has no ack for it): insert
        // warm-up rows until the subscriber has seen one.
        let clock = ContinuousClock()
        let warmDeadline = clock.now + .seconds(30)
        var warm = 0
        while !counter.snapshot.warmed {
            guard clock.now < warmDeadline else { throw BenchError("\(contender.name): no event within 30 s") }
            warm += 1
            let key = "warm-\(label)-\(warm)"
            try await database.write { tx in try tx.insert("Objects", ["objectId": key, "text": "warm-up"]) }
            try await Task.sleep(for: .milliseconds(50))
        }

        let start = clock.now
        let prefix = counter.prefix
        try await database.write { tx in
            for index in 0..<events {
                try tx.insert(
                    "Objects", ["objectId": prefix + String(index), "text": "event \(index)", "number": index])
            }
        }
        let committed = clock.now
        let cpuStart = processCPUSeconds()
        let deadline = committed + .seconds(120)
        while counter.snapshot.count < events, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let cpu = processCPUSeconds() - cpuStart
        consumer.cancel()
        _ = await consumer.result
        let state = counter.snapshot
        // Let the server drop the subscription before the next burst starts.
        try await Task.sleep(for: .milliseconds(200))
        return Round(
            events: events, received: state.count, wrong: state.wrong,
            seconds: ((state.last ?? clock.now) - committed).seconds,
            cpuSeconds: cpu, insertSeconds: (committed - start).seconds)
    }

    /// GQLNet: `GQLServer(WebSocket:)`, `for try await event in server.subscription(…)`.
    private static func consumeGQLServer(_ url: String, _ counter: Counter) async throws {
        let server = GQLServer(WebSocket: url)
        do {
            for try await event in server.subscription(subscription) {
                if try counter.received(event.data?["onCreateObjects"]) { break }
            }
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// Raw: graphql-transport-ws by hand over WSClient; every message decoded with `GQLValue(json:)`.
    private static func consumeRaw(_ url: String, _ counter: Counter) async throws {
        try await speak(url) { value, _ in
            try counter.received(value["payload"]?["data"]?["onCreateObjects"])
        }
    }

    /// Raw, with each `next` message's value handed to this task through an `AsyncThrowingStream`.
    private static func consumeRawThroughStream(_ url: String, _ counter: Counter) async throws {
        let (stream, continuation) = AsyncThrowingStream<GQLValue, any Error>.makeStream()
        let reader = Task {
            do {
                try await speak(url) { value, _ in
                    continuation.yield(value)
                    return false
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        defer { reader.cancel() }
        for try await value in stream {
            if try counter.received(value["payload"]?["data"]?["onCreateObjects"]) { return }
        }
    }

    /// graphql-transport-ws over WSClient: init, subscribe, answer pings; every message decoded with
    /// `GQLValue(json:)`, each `next` passed to `next` until it returns true.
    private static func speak(
        _ url: String, next: @escaping @Sendable (GQLValue, String) throws -> Bool
    ) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders[.secWebSocketProtocol] = "graphql-transport-ws"
        configuration.maxFrameSize = 1 << 24
        let logger = Logger(label: "NetBench.raw", factory: { _ in SwiftLogNoOpLogHandler() })
        let subscribe = try GQLValue.object([
            "type": "subscribe", "id": "1", "payload": ["query": .string(subscription)],
        ]).jsonString()
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
            inbound, outbound, _ in
            try await outbound.write(.text(#"{"type":"connection_init"}"#))
            for try await message in inbound.messages(maxSize: 1 << 24) {
                guard case .text(let text) = message else { continue }
                let value = try GQLValue(json: text)
                switch value["type"]?.stringValue {
                case "connection_ack":
                    try await outbound.write(.text(subscribe))
                case "next":
                    if try next(value, text) { return }
                case "ping":
                    try await outbound.write(.text(#"{"type":"pong"}"#))
                case "error", "complete":
                    throw BenchError("raw: the server ended the subscription: \(text)")
                default:
                    continue
                }
            }
        }
    }
}
