import AsyncHTTPClient
import Foundation
import GQLCore
import Logging
import Testing
import WSClient

@testable import GQLDevServer

/// The real engine behind a gate, to hold a request inside the server: each `execute` signals ``entered``,
/// then waits for ``open()`` before the real engine runs the request. Every answer is the engine's own.
final class GatedEngine: DevExecutor {
    let engine: DevEngine
    /// Yields once for each `execute` that reached the gate.
    let entered = AsyncStream<Void>.makeStream()
    private let gate = AsyncStream<Void>.makeStream()

    init(_ engine: DevEngine) {
        self.engine = engine
    }

    /// Lets one waiting (or the next) `execute` through.
    func open() { gate.continuation.yield() }

    var database: GQLDatabase { engine.database }
    var schemaSDL: String { engine.schemaSDL }

    var limits: GQLDevServer.Limits { engine.limits }

    func prepare(_ request: DevEngine.Request) -> Result<DevEngine.Prepared, DevEngine.Refusal> {
        engine.prepare(request)
    }

    func execute(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle, budget: ResponseBudget) async
        -> DevEngine.Response
    {
        entered.continuation.yield()
        var waiting = gate.stream.makeAsyncIterator()
        _ = await waiting.next()
        return await engine.execute(prepared, style: style, budget: budget)
    }

    func subscribe(_ prepared: DevEngine.Prepared, style: DevEngine.ErrorStyle) async -> DevEngine.Subscription {
        await engine.subscribe(prepared, style: style)
    }
}

/// Runs `body` against a server on a free port, then shuts it down and waits for `run()` to return.
///
/// The server runs the real engine over a fresh SQLite file (``EngineFixture``) with `configuration.schema`
/// (the default `Objects` model when `nil`), unless `engine` is given. With `ownLoops` (the default) it runs on
/// event loops of its own (two threads, as many as NIO's shared group has on CI's two cores), so that other tests
/// running in parallel cannot hold back its timers and answers; `false` keeps `configuration.eventLoopThreads`.
func withDevServer<T>(
    _ configuration: GQLDevServer.Configuration = .init(),
    engine: (any DevExecutor)? = nil,
    logger: Logger? = nil,
    ownLoops: Bool = true,
    _ body: (GQLDevServer, GQLDevServer.Endpoints) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.port = 0
    if ownLoops { configuration.eventLoopThreads = 2 }
    let fixture =
        engine == nil
        ? try EngineFixture(sdl: configuration.schema, limits: configuration.limits, clock: configuration.clock) : nil
    let executor: any DevExecutor = try engine ?? required(fixture?.engine)
    // The fixture removes the database file when released: keep it until the server has stopped.
    defer { withExtendedLifetime(fixture) {} }
    let server = GQLDevServer(configuration: configuration, engine: executor, logger: logger)
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

extension GQLDevServer {
    /// The real engine serving requests, behind its gate when there is one.
    var devEngine: DevEngine? { (engine as? DevEngine) ?? (engine as? GatedEngine)?.engine }

    /// Waits (bounded) until the engine serves `count` subscriptions: a subscription sent over a socket is
    /// registered, so a change committed now reaches it. Whether it happened.
    func waitForSubscriptions(_ count: Int) async -> Bool {
        guard let engine = devEngine else { return false }
        return await waitUntil { engine.subscriptionCount == count }
    }
}

/// Operations on the default `Objects` model, and what the server answers to them.
enum ObjectsAPI {
    static let list = "{ listObjects { items { objectId text } } }"
    static let create = "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let get = "query($id: ID!) { getObjects(objectId: $id) { objectId text } }"
    static let onCreate = "subscription { onCreateObjects { objectId text } }"

    /// The request creating an object, as a `{query, variables}` JSON value.
    static func createRequest(_ id: String, _ text: String) -> GQLValue {
        ["query": .string(create), "variables": ["input": ["objectId": .string(id), "text": .string(text)]]]
    }

    /// An object as `list`, `create`, `get` and `onCreate` select it.
    static func object(_ id: String, _ text: String) -> GQLValue {
        ["objectId": .string(id), "text": .string(text)]
    }

    /// The response to `create`.
    static func created(_ id: String, _ text: String) -> GQLValue {
        ["data": ["createObjects": object(id, text)]]
    }

    /// The event an `onCreate` subscription receives.
    static func createdEvent(_ id: String, _ text: String) -> GQLValue {
        ["data": ["onCreateObjects": object(id, text)]]
    }

    /// The response to `list` for these objects, in order.
    static func listed(_ objects: [GQLValue]) -> GQLValue {
        ["data": ["listObjects": ["items": .array(objects)]]]
    }
}

/// What an HTTP exchange gave: the status, the headers and the body as JSON (`nil` when it is not JSON).
struct HTTPOutcome {
    var status: Int
    var headers: [String: String]
    var json: GQLValue?
    /// The body as text, exactly as sent.
    var text = ""
}

/// Sends one request with AsyncHTTPClient; a body goes with `contentType` unless that is `nil`.
func httpRequest(
    _ url: String, method: String = "POST", body: String? = nil, headers: [String: String] = [:],
    contentType: String? = "application/json"
) async throws -> HTTPOutcome {
    var request = HTTPClientRequest(url: url)
    request.method = .init(rawValue: method)
    if body != nil, let contentType { request.headers.add(name: "Content-Type", value: contentType) }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(Array(body.utf8)) }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
    let bytes = try await response.body.collect(upTo: 1 << 22)
    var outcome = HTTPOutcome(status: Int(response.status.code), headers: [:], json: nil)
    for header in response.headers { outcome.headers[header.name.lowercased()] = header.value }
    outcome.json = try? GQLValue(json: Data(bytes.readableBytesView))
    outcome.text = String(decoding: bytes.readableBytesView, as: UTF8.self)
    return outcome
}

/// The URL of a GET request for `query` with `variables` (sent as JSON text), percent-encoded.
func getURL(_ endpoint: String, query: String, variables: GQLValue? = nil) throws -> String {
    var components = try required(URLComponents(string: endpoint))
    var items = [URLQueryItem(name: "query", value: query)]
    if let variables { items.append(URLQueryItem(name: "variables", value: try variables.jsonString())) }
    components.queryItems = items
    return try required(components.string)
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

    /// The next text message as it was sent; `nil` once the socket closed.
    func receiveText() async throws -> String? {
        while let message = try await iterator.next() {
            if case .text(let text) = message { return text }
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

/// A header that sends a request to the router's path: a `Connection` value that neither the direct reader (which
/// takes `keep-alive` alone) nor the planned handler (which takes no `Connection`) answers, and that changes
/// nothing else (it names a hop-by-hop header the request does not have).
let usualPathConnection = (name: "Connection", value: "keep-alive, X-Usual-Path")

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
