import Foundation
import GQLCore
import GQLDevServer
import Testing

@testable import GQLNet

/// `GQLServer`'s authorization provider against the dev server in its OpenID Connect mode, with tokens that
/// expire mid-session at an injected clock: the provider is asked again after a refusal and the request or
/// connection is retried once.
@Suite("GQLServer authorization provider")
struct AuthorizationTests {
    static let create = "mutation($input: CreateObjectsInput!) { createObjects(input: $input) { objectId text } }"
    static let onCreate = "subscription { onCreateObjects { objectId text } }"
    static let list = "{ listObjects { items { objectId } } }"

    /// Generous deadlines: they bound a wait that ends with an answer, and a full parallel run on a loaded 2-core
    /// machine has kept refused connections from being seen within the default 10 s.
    static var patient: GQLServer.Configuration {
        var configuration = GQLServer.Configuration()
        configuration.connectTimeout = .seconds(60)
        configuration.timeout = .seconds(60)
        return configuration
    }

    @Test func httpRetriesOnceWithAFreshTokenAfterA401() async throws {
        let clock = TestClock()
        let mint = TokenMint(clock: clock)
        try await withDevServer(TokenMint.configuration(clock)) { endpoint in
            try await withClient(GQLServer(HTTP: endpoint, configuration: Self.patient, authorization: mint.provider)) {
                server in
                let made = try await server.mutation(Self.create, ["input": ["objectId": "h1", "text": "one"]])
                #expect(made.errors.isEmpty)
                let first = try #require(mint.asked.first)
                clock.advance(seconds: 61)  // the held token expired at the server's clock

                let listed = try await server.query(Self.list)
                #expect(listed.data?["listObjects"]?["items"]?.arrayValue?.count == 1)
                let asked = mint.asked
                #expect(asked.map(\.isRetry) == [false, false, true])
                #expect(asked.allSatisfy { $0.transport == .http })
                #expect(first.rejected == nil)
                #expect(asked.last?.rejected?.hasPrefix("Bearer ") == true)
                #expect(mint.minted == 2)
            }
        }
    }

    @Test func refusedTokensGet401WithTheReason() async throws {
        let clock = TestClock()
        let mint = TokenMint(clock: clock)
        let cases: [(String, String?, String)] = [
            ("forged", try TokenMint.token(mint.claims(serial: 1), secret: "another-secret"), "signature"),
            ("expired", try TokenMint.token(mint.claims(serial: 2, expiresIn: -1)), "expired"),
            ("wrong audience", try TokenMint.token(mint.claims(serial: 3, audience: "other-app")), "audience"),
            ("missing", nil, "no Authorization token"),
        ]
        try await withDevServer(TokenMint.configuration(clock)) { endpoint in
            for (name, token, reason) in cases {
                // A provider that cannot do better: the same value on the retry, so no second request.
                let server = GQLServer(HTTP: endpoint, configuration: Self.patient, authorization: { _ in token })
                try await withClient(server) { server in
                    let error = await #expect(throws: GQLError.self, "\(name)") {
                        try await server.query(Self.list)
                    }
                    #expect(error?.httpStatus == 401, "\(name)")
                    #expect(error?.message.contains(reason) == true, "\(name): \(error?.message ?? "")")
                    if let token { #expect(error?.message.contains(token) == false, "\(name) quotes the token") }
                }
            }
        }
    }

    @Test(arguments: [GQLServer.WebSocketProtocol.graphqlTransportWS, .graphqlWS])
    func socketRefusedTwiceFailsWith4401(_ kind: GQLServer.WebSocketProtocol) async throws {
        let clock = TestClock()
        let mint = TokenMint(clock: clock)
        let expired = try TokenMint.token(mint.claims(serial: 1, expiresIn: -1))
        let asked = GQLLocked<[GQLServer.AuthorizationRequest]>([])
        try await withRunningDevServer(TokenMint.configuration(clock)) { running in
            let server = GQLServer(
                WebSocket: running.endpoints.webSocket, protocol: kind, configuration: Self.patient,
                authorization: { request in
                    asked.withLock { $0.append(request) }
                    return expired
                })
            try await withClient(server) { server in
                let error = await #expect(throws: GQLError.self) { try await server.connect() }
                #expect(error?.code == .unauthorized)
                #expect(error?.message.contains("4401") == true || error?.message.contains("expired") == true)
                let requests = asked.withLock { $0 }
                #expect(requests.map(\.isRetry) == [false, true])
                #expect(requests.last?.rejected == expired)
                #expect(requests.allSatisfy { $0.transport == .webSocket })
            }
        }
    }

    @Test(arguments: [GQLServer.WebSocketProtocol.graphqlTransportWS, .graphqlWS])
    func socketReconnectsWithAFreshTokenWhenItExpiresMidSession(_ kind: GQLServer.WebSocketProtocol) async throws {
        let clock = TestClock()
        let mint = TokenMint(clock: clock)
        try await withRunningDevServer(TokenMint.configuration(clock)) { running in
            let server = GQLServer(
                WebSocket: running.endpoints.webSocket, protocol: kind, configuration: Self.patient,
                authorization: mint.provider)
            try await withClient(server) { server in
                let (progress, arrived) = AsyncStream<String>.makeStream()
                let seen = Self.objectIds(of: server.subscription(Self.onCreate), until: "w3", progress: arrived)
                try #require(await running.waitForSubscriptions(1))
                let first = try await server.mutation(Self.create, ["input": ["objectId": "w1", "text": "a"]])
                #expect(first.errors.isEmpty)
                // The answer and the event race: the token expires once the event has arrived.
                var events = progress.makeAsyncIterator()
                #expect(await events.next() == "w1")
                clock.advance(seconds: 61)

                // Refused with 4401 at the server's clock; reconnected with a fresh token and sent again.
                let second = try await server.mutation(Self.create, ["input": ["objectId": "w2", "text": "b"]])
                #expect(second.errors.isEmpty)
                #expect(second.data?["createObjects"]?["objectId"] == "w2")
                try #require(await running.waitForSubscriptions(1))
                _ = try await server.mutation(Self.create, ["input": ["objectId": "w3", "text": "c"]])

                let ids = try await seen.value
                #expect(ids.first == "w1")
                #expect(ids.last == "w3")
                #expect(mint.asked.map(\.isRetry) == [false, true])
                #expect(mint.asked.last?.rejected?.hasPrefix("Bearer ") == true)
            }
        }
    }

    @Test func appSyncStartRefusedMidSessionReconnectsWithAFreshToken() async throws {
        let clock = TestClock()
        let mint = TokenMint(clock: clock)
        try await withRunningDevServer(TokenMint.configuration(clock)) { running in
            let server = GQLServer(
                AppSync: running.endpoints.http, key: nil, realtime: running.endpoints.webSocket,
                configuration: Self.patient, authorization: mint.provider)
            try await withClient(server) { server in
                let early = Self.objectIds(of: server.subscription(Self.onCreate), until: "x2")
                try #require(await running.waitForSubscriptions(1))
                clock.advance(seconds: 61)
                // AppSync checks the token of every `start`: this one is refused, the client reconnects with a
                // fresh token and starts both subscriptions again.
                let late = Self.objectIds(of: server.subscription(Self.onCreate), until: "x2")
                try #require(await running.waitForSubscriptions(2))
                // HTTP gets the refreshed token the provider now holds.
                let made = try await server.mutation(Self.create, ["input": ["objectId": "x2", "text": "b"]])
                #expect(made.errors.isEmpty)
                #expect(try await early.value == ["x2"])
                #expect(try await late.value == ["x2"])
                let socketRetries = mint.asked.filter { $0.transport == .webSocket }.map(\.isRetry)
                #expect(socketRetries == [false, true])
            }
        }
    }

    @Test func aValueThatCannotBeAHeaderIsRefusedBeforeSending() async throws {
        // Port 9 (discard) is never reached: the value is checked first.
        for value in ["Bearer a\r\nX-Injected: 1", ""] {
            try await withClient(GQLServer(HTTP: "http://127.0.0.1:9/graphql", authorization: { _ in value })) {
                server in
                let error = await #expect(throws: GQLError.self) { try await server.query(Self.list) }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.contains("X-Injected") == false)
            }
        }
    }

    @Test func perCallHeadersOnAWebSocketOnlyServerAreRefused() async throws {
        let server = GQLServer(WebSocket: "ws://127.0.0.1:9/graphql")
        try await withClient(server) { server in
            let error = await #expect(throws: GQLError.self) {
                try await server.query(Self.list, headers: ["x-request-id": "1"])
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("per-call headers") == true)
        }
    }

    /// The object ids a subscription delivers, until `last` arrives.
    static func objectIds(
        of subscription: GQLServer.Subscription, until last: String,
        progress: AsyncStream<String>.Continuation? = nil
    ) -> Task<[String], any Error> {
        Task {
            var ids: [String] = []
            for try await event in subscription {
                guard let id = event.data?["onCreateObjects"]?["objectId"]?.stringValue else { continue }
                ids.append(id)
                progress?.yield(id)
                if id == last { break }
            }
            return ids
        }
    }
}
