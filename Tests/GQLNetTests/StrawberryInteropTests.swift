import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import GQLNet

/// `GQLServer` against an independent server: Strawberry GraphQL on uvicorn (Tests/Interop/strawberry_peer.py,
/// run with the Python of the .venv `make venv` makes), over HTTP with batching and gzip, and over both WebSocket
/// subprotocols.
@Suite("GQLServer against Strawberry", .timeLimit(.minutes(3)))
struct StrawberryInteropTests {
    static let socketProtocols: [GQLServer.WebSocketProtocol] = [.graphqlTransportWS, .graphqlWS]
    static let echo = "mutation($input: EchoInput!) { echo(input: $input) { text tags } }"

    struct Person: Decodable, Equatable {
        var id: String
        var name: String
        var age: Int
        var tags: [String]
    }

    // MARK: HTTP

    @Test func queryWithVariables() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let result = try await server.query(
                    "query($name: String!, $age: Int) { hello(name: $name) people(minAge: $age) { name tags } }",
                    ["name": "Swift", "age": 70])
                #expect(result.errors.isEmpty, "\(result.errors)")
                #expect(result.data?["hello"] == "Hello, Swift!")
                #expect(
                    result.data?["people"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Grace", "Edsger"])
                #expect(result.data?["people"]?[0]?["tags"] == ["cobol"])
                let defaulted = try await server.query("{ hello }")
                #expect(defaulted.data?["hello"] == "Hello, world!")
            }
        }
    }

    @Test func mutationWithInputObject() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let input: GQLValue = [
                    "text": #"say "hi" \ é"#, "times": 2, "tags": ["a", "b", "c"],
                ]
                let result = try await server.mutation(Self.echo, ["input": input])
                #expect(result.errors.isEmpty, "\(result.errors)")
                #expect(result.data?["echo"]?["text"] == #"say "hi" \ é say "hi" \ é"#)
                #expect(result.data?["echo"]?["tags"] == ["c", "b", "a"])
                let sum = try await server.mutation(
                    "mutation($a: Int!, $b: Int!) { add(a: $a, b: $b) }", ["a": 40, "b": 2])
                #expect(sum.data?["add"] == 42)
                // A variable of the wrong shape is the server's GraphQL error, not a transport failure.
                let bad = try await server.mutation(Self.echo, ["input": ["times": 1]])
                #expect(bad.errors.first?.message.contains("text") == true, "\(bad.errors)")
            }
        }
    }

    @Test func errorsArriveWithPartialData() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let result = try await server.query("{ hello\n  boom }")
                #expect(result.data?["hello"] == "Hello, world!")
                #expect(result.data?["boom"] == .null)
                let error = try #require(result.errors.first)
                #expect(result.errors.count == 1)
                #expect(error.message == "boom: this field always fails")
                #expect(error.path == [.key("boom")])
                #expect(error.locations == [.init(line: 2, column: 3)])

                // The typed form throws the errors, with the partial data.
                await #expect {
                    _ = try await server.query(String.self, "{ hello boom }", at: "hello")
                } throws: { error in
                    guard let failure = error as? GQLResult.Failure else { return false }
                    return failure.errors.map(\.message) == ["boom: this field always fails"]
                        && failure.data?["hello"] == "Hello, world!"
                }
            }
        }
    }

    @Test func typedDecodingAtAPath() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let ada = try await server.query(
                    Person.self, "query($id: ID!) { person(id: $id) { id name age tags } }", ["id": "1"], at: "person")
                #expect(ada == Person(id: "1", name: "Ada", age: 36, tags: ["math", "engines"]))
                let name = try await server.query(
                    String.self, "{ people { name } }", at: "people.2.name")
                #expect(name == "Edsger")
                let people = try await server.query([Person].self, "{ people { id name age tags } }", at: "people")
                #expect(people.map(\.id) == ["1", "2", "3"])
                await #expect {
                    _ = try await server.query(Person.self, "{ people { id } }", at: "people.7")
                } throws: { ($0 as? GQLError)?.code == .notFound }
                await #expect {
                    _ = try await server.query(Person.self, "{ people { id name } }", at: "people.0")
                } throws: { ($0 as? GQLError)?.code == .decoding }
            }
        }
    }

    @Test func batchReturnsResultsInOrder() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let results = try await server.batch([
                    (query: "query($n: String!) { hello(name: $n) }", variables: ["n": "one"]),
                    (query: "mutation($a: Int!) { add(a: $a, b: 1) }", variables: ["a": 1]),
                    (query: "{ hello boom }", variables: [:]),
                    (query: "query($id: ID!) { person(id: $id) { name } }", variables: ["id": "3"]),
                    (query: "query($n: String!) { hello(name: $n) }", variables: ["n": "five"]),
                ])
                try #require(results.count == 5)
                #expect(results[0].data?["hello"] == "Hello, one!")
                #expect(results[1].data?["add"] == 2)
                #expect(results[2].data?["hello"] == "Hello, world!")
                #expect(results[2].errors.map(\.message) == ["boom: this field always fails"])
                #expect(results[3].data?["person"]?["name"] == "Edsger")
                #expect(results[4].data?["hello"] == "Hello, five!")
                #expect(results.enumerated().allSatisfy { $0.offset == 2 || $0.element.errors.isEmpty })
                // One HTTP request carried them: the peer answered one response besides this query's.
                let before = try await Self.httpStats(server)
                _ = try await server.batch([(query: "{ hello }", variables: [:]), (query: "{ hello }", variables: [:])])
                let after = try await Self.httpStats(server)
                #expect(after.total - before.total == 2, "a batch and the stats query: \(before) → \(after)")
            }
        }
    }

    @Test func gzipAnswersAreDecoded() async throws {
        try await withStrawberryPeer { peer in
            let size = 300_000
            let pattern = Array("GraphQLite-Strawberry-")
            let expected = String((0..<size).map { pattern[$0 % pattern.count] })
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let before = try await Self.httpStats(server)
                let result = try await server.query("query($size: Int!) { big(size: $size) }", ["size": size])
                #expect(result.data?["big"]?.stringValue == expected)
                let after = try await Self.httpStats(server)
                // The answer to `big` (and to the first stats query) left the peer gzip-encoded.
                #expect(after.gzipped - before.gzipped == 2, "\(before) → \(after)")
                #expect(after.lastAcceptEncoding?.contains("gzip") == true, "\(after)")
            }
            // Without compression the same answer comes as is.
            var plain = GQLServer.Configuration()
            plain.acceptsCompression = false
            try await withClient(GQLServer(HTTP: peer.http, configuration: plain)) { server in
                let before = try await Self.httpStats(server)
                let result = try await server.query("query($size: Int!) { big(size: $size) }", ["size": size])
                #expect(result.data?["big"]?.stringValue == expected)
                let after = try await Self.httpStats(server)
                #expect(after.gzipped == before.gzipped, "\(before) → \(after)")
                #expect(after.lastAcceptEncoding?.contains("gzip") != true, "\(after)")
            }
            // On the wire: a raw request accepting gzip gets `Content-Encoding: gzip` and gzip bytes.
            let (encoding, bytes) = try await Self.rawPost(
                #"{"query":"{ big(size: 300000) }"}"#, to: peer.http, acceptEncoding: "gzip, deflate")
            #expect(encoding == "gzip")
            #expect(bytes.prefix(2) == [0x1f, 0x8b], "not gzip: \(bytes.prefix(16))")
            #expect(bytes.count < size / 10, "\(bytes.count) compressed bytes for \(size) characters")
        }
    }

    // MARK: WebSocket

    @Test(arguments: socketProtocols)
    func countSubscriptionEnds(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http, WebSocket: peer.webSocket, protocol: kind)) { server in
                var values: [GQLValue?] = []
                for try await result in server.subscription("subscription($to: Int!) { count(to: $to) }", ["to": 3]) {
                    #expect(result.errors.isEmpty, "\(result.errors)")
                    values.append(result.data?["count"])
                }
                #expect(values == [1, 2, 3])
                // The connection stays usable for the next one.
                var again: [GQLValue?] = []
                for try await result in server.subscription("subscription { count(to: 1) }") {
                    again.append(result.data?["count"])
                }
                #expect(again == [1])
            }
        }
    }

    @Test(arguments: socketProtocols)
    func mutationFedSubscription(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http, WebSocket: peer.webSocket, protocol: kind)) { server in
                let events = firstElements(3, of: server.subscription("subscription { events }"))
                try #require(await Self.waitForListeners(1, server), "the subscription never reached the peer")
                for message in ["first", #"with "quotes" \ and ünïcode"#, "third"] {
                    let published = try await server.mutation(
                        "mutation($m: String!) { publish(message: $m) }", ["m": message])
                    #expect(published.data?["publish"] == 1, "\(published)")
                }
                let received = try await events.value
                #expect(received.map { $0.data?["events"] } == ["first", #"with "quotes" \ and ünïcode"#, "third"])
                // Leaving the loop stopped the subscription on the server.
                #expect(await Self.waitForListeners(0, server), "the peer still serves the subscription")
            }
        }
    }

    @Test func operationsOverAWebSocketOnlyServer() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(WebSocket: peer.webSocket, protocol: .graphqlTransportWS)) { server in
                try await server.connect()
                #expect(server.connectionState == .connected)
                let hello = try await server.query("query($n: String!) { hello(name: $n) }", ["n": "socket"])
                #expect(hello.data?["hello"] == "Hello, socket!")
                let echoed = try await server.mutation(
                    Self.echo, ["input": ["text": "ws", "tags": ["x", "y"]] as GQLValue])
                #expect(echoed.data?["echo"]?["text"] == "ws")
                #expect(echoed.data?["echo"]?["tags"] == ["y", "x"])
                let partial = try await server.query("{ hello boom }")
                #expect(partial.data?["hello"] == "Hello, world!")
                #expect(partial.errors.map(\.message) == ["boom: this field always fails"])
                #expect(partial.errors.first?.path == [.key("boom")])
                let ada = try await server.query(
                    Person.self, "query($id: ID!) { person(id: $id) { id name age tags } }", ["id": "1"], at: "person")
                #expect(ada.name == "Ada")
                let results = try await server.batch([
                    (query: "{ hello }", variables: [:]),
                    (query: "mutation { add(a: 2, b: 3) }", variables: [:]),
                ])
                #expect(results.map { $0.data } == [["hello": "Hello, world!"], ["add": 5]])
                var counted: [GQLValue?] = []
                for try await result in server.subscription("subscription { count(to: 2) }") {
                    counted.append(result.data?["count"])
                }
                #expect(counted == [1, 2])
                #expect(server.url == nil)
            }
        }
    }

    /// Strawberry runs only subscriptions over the legacy `graphql-ws` protocol; its refusal of a query reaches
    /// the caller as the server's GraphQL errors in the result, and subscriptions still work on the WebSocket-only
    /// server.
    @Test func legacyProtocolRefusesQueriesWithAGraphQLError() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(WebSocket: peer.webSocket, protocol: .graphqlWS)) { server in
                try await server.connect()
                // The refusal is an answer with errors, as a validation error over HTTP would be.
                let query = try await server.query("{ hello }")
                #expect(query.data == nil)
                #expect(query.errors.map(\.message) == ["queries are not allowed"])
                let mutation = try await server.mutation("mutation { add(a: 1, b: 2) }")
                #expect(mutation.errors.map(\.message) == ["mutations are not allowed"])
                var counted: [GQLValue?] = []
                for try await result in server.subscription("subscription { count(to: 2) }") {
                    counted.append(result.data?["count"])
                }
                #expect(counted == [1, 2])
            }
        }
    }

    /// A response whose `data` is `null` (a validation error) has `data == nil`, as ``GQLResult/data`` documents.
    @Test func nullDataReadsAsNil() async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http)) { server in
                let result = try await server.query("{ noSuchField }")
                #expect(result.errors.first?.message.contains("noSuchField") == true, "\(result.errors)")
                // Strawberry answers {"data": null, "errors": [...]}.
                #expect(result.data == Optional<GQLValue>.none, "data: \(String(describing: result.data))")
            }
        }
    }

    /// Strawberry's default WebSocket origin check (no `allowed_origins`) accepts a handshake without `Origin` or
    /// from the page's own origin, and refuses any other with 403. The client sends no `Origin` unless asked, and
    /// exactly the one asked for; a refusal says the status it got and is not retried.
    @Test(arguments: socketProtocols)
    func defaultOriginCheckAcceptsTheClient(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withStrawberryPeer { peer in
            var configuration = GQLServer.Configuration()
            configuration.reconnect = .never
            let sameOrigin = peer.http.replacingOccurrences(of: "/graphql", with: "")
            for headers in [[:], ["Origin": sameOrigin]] {
                try await withClient(
                    GQLServer(WebSocket: peer.webSocket, protocol: kind, headers: headers, configuration: configuration)
                ) { server in
                    try await server.connect()
                    // A subscription, which both subprotocols carry (Strawberry's graphql-ws refuses queries).
                    var values: [GQLValue?] = []
                    for try await result in server.subscription("subscription { count(to: 2) }") {
                        values.append(result.data?["count"])
                    }
                    #expect(values == [1, 2])
                }
            }
            try await withClient(
                GQLServer(
                    WebSocket: peer.webSocket, protocol: kind, headers: ["Origin": "http://elsewhere.example"],
                    configuration: configuration)
            ) { server in
                await #expect {
                    try await server.connect()
                } throws: { error in
                    guard let error = error as? GQLError else { return false }
                    return error.code == .unauthorized && error.httpStatus == 403
                        && error.message.hasPrefix("WebSocket upgrade refused: HTTP 403")
                }
                // Refused for good: no reconnect loop.
                guard case .failed = server.connectionState else {
                    Issue.record("state after a refused upgrade: \(server.connectionState)")
                    return
                }
            }
            // What the peer saw: no Origin, then exactly one, then the foreign one.
            let seen = peer.stderr.split(separator: "\n").filter { $0.hasPrefix("websocket handshake Origin headers") }
            #expect(
                seen == [
                    "websocket handshake Origin headers: []",
                    "websocket handshake Origin headers: ['\(sameOrigin)']",
                    "websocket handshake Origin headers: ['http://elsewhere.example']",
                ], "\(peer.stderr)")
        }
    }

    @Test(arguments: socketProtocols)
    func subscriptionErrorThrowsFailure(_ kind: GQLServer.WebSocketProtocol) async throws {
        try await withStrawberryPeer { peer in
            try await withClient(GQLServer(HTTP: peer.http, WebSocket: peer.webSocket, protocol: kind)) { server in
                await #expect {
                    for try await _ in server.subscription("subscription { noSuchField }") {}
                } throws: { error in
                    guard let failure = error as? GQLResult.Failure else { return false }
                    return failure.errors.contains { $0.message.contains("noSuchField") }
                }
                // The connection survives the refused subscription.
                var values: [GQLValue?] = []
                for try await result in server.subscription("subscription { count(to: 2) }") {
                    values.append(result.data?["count"])
                }
                #expect(values == [1, 2])
            }
        }
    }

    // MARK: Helpers

    /// What the peer's HTTP layer answered so far.
    struct HTTPStats: Decodable, CustomStringConvertible {
        var gzipped: Int
        var identity: Int
        var lastAcceptEncoding: String?
        var total: Int { gzipped + identity }
        var description: String {
            "gzipped \(gzipped), identity \(identity), last Accept-Encoding \(lastAcceptEncoding ?? "none")"
        }
    }

    static func httpStats(_ server: GQLServer) async throws -> HTTPStats {
        try await server.query(
            HTTPStats.self, "{ httpStats { gzipped identity lastAcceptEncoding } }", at: "httpStats")
    }

    /// Polls (bounded, 10 s) until the peer serves `count` `events` subscriptions.
    static func waitForListeners(_ count: Int, _ server: GQLServer) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let listeners = try? await server.query("{ listeners }").data?["listeners"]?.intValue,
                listeners == count
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Posts `json` with AsyncHTTPClient, decompression off, and returns the answer's `Content-Encoding` and bytes.
    static func rawPost(_ json: String, to url: String, acceptEncoding: String) async throws -> (String?, [UInt8]) {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Accept-Encoding", value: acceptEncoding)
            request.body = .bytes(ByteBuffer(string: json))
            let response = try await client.execute(request, timeout: .seconds(30))
            var body = try await response.body.collect(upTo: 1 << 24)
            let bytes = body.readBytes(length: body.readableBytes) ?? []
            try await client.shutdown()
            return (response.headers.first(name: "Content-Encoding"), bytes)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
