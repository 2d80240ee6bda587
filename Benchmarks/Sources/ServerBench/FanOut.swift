import Foundation
import Logging
import Synchronization
import WSClient

/// Subscription fan-out: `subscribers` WebSockets (graphql-transport-ws) subscribed to `onCreateObjects`,
/// `events` objects created over HTTP by `publishers` concurrent clients; every subscriber must receive every
/// event. Reports deliveries per second (first publish to last delivery) and the latency of each delivery
/// (publish request sent → event received).
struct FanOut {
    struct Result: Sendable {
        var subscribers: Int
        var events: Int
        var delivered: Int
        var seconds: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var complete: Bool
        /// Publishing mutations whose answer was not exactly the created object.
        var wrongAnswers: Int
        var perSecond: Double { seconds > 0 ? Double(delivered) / seconds : 0 }
    }

    var subscribers = 100
    var events = 1000
    var publishers = 4
    /// Events per second over all publishers; `nil`: as fast as the server takes them. A paced run measures
    /// latency without the backlog an unpaced one builds up.
    var rate: Double?
    var timeout: Duration = .seconds(60)

    /// Shared between the subscribers' sockets and the publishers.
    private final class Recorder: Sendable {
        struct State {
            var sent: [String: ContinuousClock.Instant] = [:]
            var latencies: [Double] = []
            var warmed: Set<Int> = []
            var perSubscriber: [Int: Int] = [:]
            var lastDelivery: ContinuousClock.Instant?
            var wrongAnswers = 0
        }

        let state = Mutex(State())
        let events: Int

        init(subscribers: Int, events: Int) {
            self.events = events
            state.withLock { $0.latencies.reserveCapacity(subscribers * events) }
        }

        func sending(_ key: String) {
            let now = ContinuousClock.now
            state.withLock { $0.sent[key] = now }
        }

        /// Returns true when `subscriber` has received every event.
        func received(_ key: Substring, by subscriber: Int) -> Bool {
            let now = ContinuousClock.now
            return state.withLock { state in
                if key.hasPrefix("warm-") {
                    state.warmed.insert(subscriber)
                } else if let sent = state.sent[String(key)] {
                    let latency = now - sent
                    state.latencies.append(
                        Double(latency.components.seconds) * 1000 + Double(latency.components.attoseconds) / 1e15)
                    state.lastDelivery = now
                    state.perSubscriber[subscriber, default: 0] += 1
                }
                return state.perSubscriber[subscriber, default: 0] >= events
            }
        }

        var warmedCount: Int { state.withLock { $0.warmed.count } }
        var deliveredCount: Int { state.withLock { $0.latencies.count } }
    }

    func run(http: GraphQLHTTP, webSocket: String, runID: String) async throws -> Result {
        let recorder = Recorder(subscribers: subscribers, events: events)
        let logger = Logger(label: "ServerBench", factory: { _ in SwiftLogNoOpLogHandler() })
        let sockets = (0..<subscribers).map { subscriber in
            Task { try await Self.subscribe(webSocket, subscriber: subscriber, recorder: recorder, logger: logger) }
        }
        defer { for socket in sockets { socket.cancel() } }

        // Subscriptions go live a moment after their subscribe message (the protocol has no ack for it):
        // publish warm-up objects until every subscriber has seen one.
        let clock = ContinuousClock()
        let warmDeadline = clock.now + .seconds(30)
        var warm = 0
        while recorder.warmedCount < subscribers {
            guard clock.now < warmDeadline else {
                throw ChildServer.Failure(
                    description: "only \(recorder.warmedCount) of \(subscribers) subscriptions went live in 30 s")
            }
            warm += 1
            let key = "warm-\(runID)-\(warm)"
            if await !http.answers(Operations.createBody(key), Operations.createAnswer(key, number: 1)) {
                recorder.state.withLock { $0.wrongAnswers += 1 }
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        let start = clock.now
        let perPublisher = (events + publishers - 1) / publishers
        let events = self.events
        let publishers = self.publishers
        let rate = self.rate
        await withTaskGroup(of: Void.self) { group in
            for publisher in 0..<publishers {
                group.addTask {
                    for index in 0..<perPublisher {
                        // Paced: event k goes out at start + k / rate, publishers taking turns.
                        let event = rate == nil ? publisher * perPublisher + index : index * publishers + publisher
                        guard event < events else { return }
                        if let rate { try? await Task.sleep(until: start + .seconds(Double(event) / rate)) }
                        let key = "ev-\(runID)-\(event)"
                        recorder.sending(key)
                        let body = Operations.createBody(key, number: event)
                        if await !http.answers(body, Operations.createAnswer(key, number: event)) {
                            recorder.state.withLock { $0.wrongAnswers += 1 }
                        }
                    }
                }
            }
        }
        let deadline = start + timeout
        while recorder.deliveredCount < subscribers * events, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let state = recorder.state.withLock { $0 }
        let end = state.lastDelivery ?? clock.now
        let elapsed = end - start
        let latencies = state.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Result(
            subscribers: subscribers, events: events, delivered: latencies.count,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            p50Milliseconds: percentile(0.50), p99Milliseconds: percentile(0.99),
            complete: latencies.count == subscribers * events, wrongAnswers: state.wrongAnswers)
    }

    /// One subscriber: graphql-transport-ws, `onCreateObjects { objectId }`, until every event arrived.
    private static func subscribe(_ url: String, subscriber: Int, recorder: Recorder, logger: Logger) async throws {
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders[.secWebSocketProtocol] = "graphql-transport-ws"
        configuration.maxFrameSize = 1 << 20
        try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
            inbound, outbound, _ in
            try await outbound.write(.text(#"{"type":"connection_init","payload":{}}"#))
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message else { continue }
                if text.contains("connection_ack") {
                    try await outbound.write(
                        .text(
                            #"{"id":"1","type":"subscribe","payload":{"query":"subscription { onCreateObjects { objectId } }"}}"#
                        ))
                } else if let key = objectID(in: text) {
                    if recorder.received(key, by: subscriber) { return }
                } else if text.contains("\"ping\"") {
                    try await outbound.write(.text(#"{"type":"pong"}"#))
                }
            }
        }
    }

    /// The value of the first `"objectId"` member of a JSON text, without decoding the whole message.
    static func objectID(in text: String) -> Substring? {
        guard let name = text.range(of: "\"objectId\"") else { return nil }
        var index = name.upperBound
        while index < text.endIndex, text[index] == " " || text[index] == ":" { index = text.index(after: index) }
        guard index < text.endIndex, text[index] == "\"" else { return nil }
        let start = text.index(after: index)
        guard let end = text[start...].firstIndex(of: "\"") else { return nil }
        return text[start..<end]
    }
}
