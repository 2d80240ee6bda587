import AsyncHTTPClient
import Foundation
import GQLCore
import Logging
import Testing
import WSClient

@testable import GQLDevServer

/// An engine with scripted answers, so the transport tests run without the real schema:
///
/// - a document starting with `mutation`, `subscription`, `query` or `{` has that kind; anything else does
///   not parse (`operationKind` throws, `execute` answers `{"errors":[{"message":"Syntax Error…"}]}`);
/// - queries answer `{"data":{"echo":QUERY,"variables":VARIABLES}}`;
/// - mutations answer the same and publish `{"data":{"event":VARIABLES}}` to every open subscription;
/// - subscriptions first yield `{"data":{"tick":0}}` (so a client knows it is live), then every published
///   event; one containing `finite` ends after the tick; one containing `refuse` fails at once;
/// - a query containing `slow` waits for ``releaseSlow()`` (to hold a request in flight).
final class ScriptedEngine: DevExecutor {
    let database: GQLDatabase
    let schemaSDL = "type Query { echo: String }"
    private let subscribers = GQLLocked<[Int: AsyncThrowingStream<GQLValue, any Error>.Continuation]>([:])
    private let counter = GQLLocked(0)

    init() throws {
        database = try GQLDatabase(path: ":memory:")
    }

    func operationKind(_ request: DevEngine.Request) throws -> DevEngine.OperationKind {
        let text = request.query.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("mutation") { return .mutation }
        if text.hasPrefix("subscription") { return .subscription }
        if text.hasPrefix("query") || text.hasPrefix("{") { return .query }
        throw GQLError(.invalidArgument, "Syntax Error: unexpected \(text.prefix(10))")
    }

    /// Signals when a query containing `slow` arrives; such a query waits for ``releaseSlow()``.
    let slowEntered = AsyncStream<Void>.makeStream()
    private let slowGate = AsyncStream<Void>.makeStream()

    func releaseSlow() { slowGate.continuation.yield() }

    func execute(_ request: DevEngine.Request, style: DevEngine.ErrorStyle) async -> GQLValue {
        if request.query.contains("slow") {
            slowEntered.continuation.yield()
            var gate = slowGate.stream.makeAsyncIterator()
            _ = await gate.next()
        }
        guard let kind = try? operationKind(request) else {
            return ["errors": [["message": "Syntax Error: cannot parse the document"]]]
        }
        if kind == .mutation {
            let event: GQLValue = ["data": ["event": .object(request.variables)]]
            for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
        }
        return ["data": ["echo": .string(request.query), "variables": .object(request.variables)]]
    }

    func subscribe(_ request: DevEngine.Request, style: DevEngine.ErrorStyle) async -> DevEngine.Subscription {
        if request.query.contains("refuse") {
            let error: GQLValue =
                style == .appSync
                ? ["errorType": "ValidationError", "message": "Refused"] : ["message": "Refused"]
            return .failed(["errors": [error]])
        }
        let (stream, continuation) = AsyncThrowingStream<GQLValue, any Error>.makeStream()
        continuation.yield(["data": ["tick": 0]])
        if request.query.contains("finite") {
            continuation.finish()
            return .stream(stream)
        }
        let id = counter.withLock { value in
            value += 1
            return value
        }
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [subscribers] _ in _ = subscribers.withLock { $0.removeValue(forKey: id) } }
        return .stream(stream)
    }

    /// The number of subscriptions being served.
    var subscriberCount: Int { subscribers.withLock { $0.count } }
}

/// Runs `body` against a server on a free port, then shuts it down and waits for `run()` to return.
func withDevServer<T>(
    _ configuration: GQLDevServer.Configuration = .init(),
    engine: (any DevExecutor)? = nil,
    _ body: (GQLDevServer, GQLDevServer.Endpoints) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    let server = GQLDevServer(configuration: configuration, engine: try engine ?? ScriptedEngine(), logger: nil)
    return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        group.addTask { try await server.run() }
        do {
            let endpoints = try await server.endpoints()
            let result = try await body(server, endpoints)
            await server.shutdown()
            try await group.waitForAll()
            return result
        } catch {
            await server.shutdown()
            group.cancelAll()
            throw error
        }
    }
}

/// What an HTTP exchange gave: the status, the headers and the body as JSON (`nil` when it is not JSON).
struct HTTPOutcome {
    var status: Int
    var headers: [String: String]
    var json: GQLValue?
}

/// Sends one request with AsyncHTTPClient.
func httpRequest(
    _ url: String, method: String = "POST", body: String? = nil, headers: [String: String] = [:]
) async throws -> HTTPOutcome {
    var request = HTTPClientRequest(url: url)
    request.method = .init(rawValue: method)
    if body != nil { request.headers.add(name: "Content-Type", value: "application/json") }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(Array(body.utf8)) }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let bytes = try await response.body.collect(upTo: 1 << 22)
    var outcome = HTTPOutcome(status: Int(response.status.code), headers: [:], json: nil)
    for header in response.headers { outcome.headers[header.name.lowercased()] = header.value }
    outcome.json = try? GQLValue(json: Data(bytes.readableBytesView))
    return outcome
}

/// POSTs a JSON value.
func post(_ url: String, _ value: GQLValue, headers: [String: String] = [:]) async throws -> HTTPOutcome {
    try await httpRequest(url, body: try value.jsonString(), headers: headers)
}

/// A WebSocket client speaking raw JSON messages, for the scripts of ``withWebSocket(_:protocols:headers:_:)``.
final class TestSocket {
    private let outbound: WebSocketOutboundWriter
    private var iterator: WebSocketInboundMessageStream.AsyncIterator

    init(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
        self.iterator = inbound.messages(maxSize: 1 << 22).makeAsyncIterator()
    }

    func send(_ message: GQLValue) async throws {
        try await outbound.write(.text(try message.jsonString()))
    }

    func sendText(_ text: String) async throws {
        try await outbound.write(.text(text))
    }

    /// The next message as JSON; `nil` once the socket closed.
    func receive() async throws -> GQLValue? {
        while let message = try await iterator.next() {
            if case .text(let text) = message { return try GQLValue(json: text) }
        }
        return nil
    }

    /// The next message whose `type` is not `ka` (keep-alives are skipped); `nil` once the socket closed.
    func receiveSkippingKeepAlive() async throws -> GQLValue? {
        while let message = try await receive() {
            if message["type"] != "ka" { return message }
        }
        return nil
    }

    /// Every message until the server closes the socket.
    func drain() async throws -> [GQLValue] {
        var messages: [GQLValue] = []
        while let message = try await receive() { messages.append(message) }
        return messages
    }
}

/// What a WebSocket session gave: the server's close code (`nil`: closed by the client or not at all) and
/// the script's result.
struct SocketOutcome<T: Sendable>: Sendable {
    var closeCode: Int?
    var closeReason: String?
    var result: T?
}

/// Connects to `url` offering `protocols`, runs `script`, and reports how the socket closed.
func withWebSocket<T: Sendable>(
    _ url: String,
    protocols: String?,
    headers: [String: String] = [:],
    _ script: @escaping @Sendable (TestSocket) async throws -> T
) async throws -> SocketOutcome<T> {
    var configuration = WebSocketClientConfiguration()
    configuration.maxFrameSize = 1 << 22
    if let protocols { configuration.additionalHeaders[.secWebSocketProtocol] = protocols }
    for (name, value) in headers {
        configuration.additionalHeaders[try required(.init(name))] = value
    }
    let box = GQLLocked<T?>(nil)
    let frame = try await WebSocketClient.connect(url: url, configuration: configuration, logger: testLogger) {
        inbound, outbound, _ in
        let socket = TestSocket(inbound, outbound)
        let result = try await script(socket)
        box.withLock { $0 = result }
    }
    return SocketOutcome(
        closeCode: frame.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) },
        closeReason: frame?.reason,
        result: box.withLock { $0 })
}

let testLogger = Logger(label: "GQLDevServerTests", factory: { _ in SwiftLogNoOpLogHandler() })

/// Base64 of a JSON value, as AppSync's `header` query parameter carries it.
func base64JSON(_ value: GQLValue, urlSafe: Bool = false) throws -> String {
    let encoded = Data(try value.jsonString().utf8).base64EncodedString()
    guard urlSafe else { return encoded }
    return encoded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// The value, or a thrown error naming what was missing.
func required<T>(_ value: T?, _ what: String = #function) throws -> T {
    guard let value else { throw GQLError(.invalidArgument, "missing value in \(what)") }
    return value
}
