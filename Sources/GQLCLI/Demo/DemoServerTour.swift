import Foundation
import GQLDevServer
import Logging
import WSClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The last step of `gql-cli demo`: GQLDevServer in-process on a free port, a subscription over WebSocket
/// (AppSync's real-time protocol, whose `start_ack` says when the subscription is live), objects created and
/// updated over HTTP, the events the subscription received, and a graceful stop.
///
/// Deterministic apart from the port: fixed data, events printed in a fixed order once both arrived.
struct DemoServerTour {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What the WebSocket side reports to the tour.
    private enum SocketEvent: Sendable {
        case started(String)
        case data(String, GQLValue)
        case failed(String)
    }

    static let apiKey = "da2-demo"
    static let fields = "objectId text number _version"
    private static let timeout: Duration = .seconds(20)

    func run() async throws {
        heading("7. The development server (gql-cli serve)")
        var configuration = GQLDevServer.Configuration()
        configuration.port = 0
        configuration.apiKey = Self.apiKey
        let quiet = Logger(label: "gql-cli.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = try GQLDevServer(configuration: configuration, logger: quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            do {
                try await withThrowingTaskGroup(of: Bool.self) { race in
                    race.addTask {
                        try await tour(server, logger: quiet)
                        return true
                    }
                    race.addTask {
                        try await Task.sleep(for: Self.timeout)
                        return false
                    }
                    let finished = try await race.next() ?? false
                    race.cancelAll()
                    if !finished { throw Failure(description: "the server tour took more than \(Self.timeout)") }
                }
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
            try await group.waitForAll()
        }
        say("server.shutdown() -> stopped")
    }

    private func tour(_ server: GQLDevServer, logger: Logger) async throws {
        let endpoints = try await server.endpoints()
        say("GQLDevServer listening on \(endpoints.http), API key \(Self.apiKey)")

        let (events, sink) = AsyncStream<SocketEvent>.makeStream()
        let socket = Task {
            await Self.watch(endpoints.webSocket, host: Self.host(endpoints.http), logger: logger, sink: sink)
        }
        defer { socket.cancel() }
        var iterator = events.makeAsyncIterator()

        var started: [String] = []
        while started.count < 2 {
            switch await iterator.next() ?? .failed("the WebSocket closed early") {
            case .started(let id): started.append(id)
            case .failed(let message): throw Failure(description: message)
            case .data: break
            }
        }
        say("WebSocket (AppSync real-time): start onCreateObjects, onUpdateObjects -> start_ack, start_ack")

        let created = try await post(
            "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { \(Self.fields) } }",
            ["input": ["objectId": "demo-1", "text": "Hello", "number": 1]], to: endpoints.http, field: "createObjects")
        say("HTTP createObjects(demo-1, \"Hello\", 1)        -> \(Self.summary(created))")
        let updated = try await post(
            "mutation ($input: UpdateObjectsInput!) { updateObjects(input: $input) { \(Self.fields) } }",
            ["input": ["objectId": "demo-1", "text": "Hello again", "number": 2]], to: endpoints.http,
            field: "updateObjects")
        say("HTTP updateObjects(demo-1, \"Hello again\", 2) -> \(Self.summary(updated))")
        let listed = try await post(
            "query ($filter: ModelObjectsFilterInput) { listObjects(filter: $filter) { items { \(Self.fields) } } }",
            ["filter": ["text": ["beginsWith": "Hello"]]], to: endpoints.http, field: "listObjects")
        let items = (listed["items"]?.arrayValue ?? []).map(Self.summary).joined(separator: "; ")
        say("HTTP listObjects(filter: text beginsWith \"Hello\") -> \(items)")

        var heard: [String: GQLValue] = [:]
        while heard.count < 2 {
            switch await iterator.next() ?? .failed("the WebSocket closed early") {
            case .data(let id, let item): heard[id] = item
            case .failed(let message): throw Failure(description: message)
            case .started: break
            }
        }
        say("subscription heard: onCreateObjects \(Self.summary(heard["create"] ?? nil))")
        say("                    onUpdateObjects \(Self.summary(heard["update"] ?? nil))")
        _ = await socket.value

        let denied = try await status(of: #"{"query":"{ listObjects { items { objectId } } }"}"#, to: endpoints.http)
        say("HTTP listObjects without x-api-key -> \(denied)")
    }

    // MARK: WebSocket

    /// Connects with AppSync's real-time protocol, starts `onCreateObjects` (id "create") and
    /// `onUpdateObjects` (id "update"), reports each `start_ack` and the first `data` of each, then stops both
    /// and closes.
    private static func watch(_ url: String, host: String, logger: Logger, sink: AsyncStream<SocketEvent>.Continuation)
        async
    {
        defer { sink.finish() }
        do {
            let header = try GQLValue.object(["host": .string(host), "x-api-key": .string(apiKey)]).jsonString()
            let query = "header=\(percentEncoded(Data(header.utf8).base64EncodedString()))&payload=e30%3D"
            var configuration = WebSocketClientConfiguration()
            configuration.additionalHeaders[.secWebSocketProtocol] = "graphql-ws"
            configuration.maxFrameSize = 1 << 20
            try await WebSocketClient.connect(url: "\(url)?\(query)", configuration: configuration, logger: logger) {
                inbound, outbound, _ in
                try await outbound.write(.text(#"{"type":"connection_init"}"#))
                var delivered: Set<String> = []
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message, let object = try? GQLValue(json: text) else { continue }
                    let id = object["id"]?.stringValue ?? ""
                    switch object["type"]?.stringValue {
                    case "connection_ack":
                        for (id, field) in [("create", "onCreateObjects"), ("update", "onUpdateObjects")] {
                            try await outbound.write(.text(try start(id, "subscription { \(field) { \(fields) } }")))
                        }
                    case "start_ack":
                        sink.yield(.started(id))
                    case "data":
                        let field = id == "create" ? "onCreateObjects" : "onUpdateObjects"
                        guard !delivered.contains(id) else { continue }
                        delivered.insert(id)
                        sink.yield(.data(id, object["payload"]?["data"]?[field] ?? .null))
                        if delivered.count == 2 {
                            for id in ["create", "update"] {
                                try await outbound.write(.text(#"{"type":"stop","id":"\#(id)"}"#))
                            }
                            return
                        }
                    case "error", "connection_error":
                        sink.yield(.failed("the server refused the subscription: \(text)"))
                        return
                    default:
                        continue  // ka, complete
                    }
                }
            }
        } catch {
            sink.yield(.failed("the WebSocket failed: \(error)"))
        }
    }

    /// An AppSync `start` message: the request as a JSON string in `data`, credentials in `extensions`.
    private static func start(_ id: String, _ query: String) throws -> String {
        let data = try GQLValue.object(["query": .string(query), "variables": [:]]).jsonString()
        let message: GQLValue = [
            "id": .string(id), "type": "start",
            "payload": ["data": .string(data), "extensions": ["authorization": ["x-api-key": .string(apiKey)]]],
        ]
        return try message.jsonString()
    }

    // MARK: HTTP

    /// POSTs a GraphQL request with the API key and returns `data[field]`; GraphQL errors are failures.
    private func post(_ query: String, _ variables: GQLValue, to url: String, field: String) async throws -> GQLValue {
        let body = try GQLValue.object(["query": .string(query), "variables": variables]).jsonData()
        let (status, data) = try await Self.send(body, to: url, apiKey: Self.apiKey)
        let response = try GQLValue(json: data)
        guard status == 200, response["errors"] == nil, let value = response["data"]?[field] else {
            throw Failure(description: "\(field) answered \(status): \(String(decoding: data, as: UTF8.self))")
        }
        return value
    }

    private func status(of json: String, to url: String) async throws -> Int {
        try await Self.send(Data(json.utf8), to: url, apiKey: nil).0
    }

    private static func send(_ body: Data, to url: String, apiKey: String?) async throws -> (Int, Data) {
        guard let endpoint = URL(string: url) else { throw Failure(description: "bad endpoint \(url)") }
        var request = URLRequest(url: endpoint, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let apiKey { request.setValue(apiKey, forHTTPHeaderField: "x-api-key") }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    // MARK: Output

    private static func summary(_ item: GQLValue?) -> String {
        guard let item, let key = item["objectId"]?.stringValue else { return "nothing" }
        let text = item["text"]?.stringValue.map { "\"\($0)\"" } ?? "null"
        let number = item["number"]?.intValue.map(String.init) ?? "null"
        let version = item["_version"]?.intValue.map(String.init) ?? "?"
        return "\(key) \(text) \(number) (_version \(version))"
    }

    private static func host(_ url: String) -> String {
        URL(string: url).map { "\($0.host ?? "127.0.0.1"):\($0.port ?? 80)" } ?? "127.0.0.1"
    }

    private static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private func heading(_ text: String) {
        print("")
        print(text)
    }

    private func say(_ text: String) {
        print("   " + text)
    }
}
