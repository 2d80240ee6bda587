import AsyncHTTPClient
import Foundation
import GQLCore
import GQLHTTP
import GQLTestSupport
import Testing

@testable import GQLNet

/// GQLServer over HTTP against servers that answer with redirects, bodies that stall, trickle or never end
/// (``HostileServer``): the shared HTTP layer's policy — no redirect followed, one deadline over head and body, error
/// bodies read up to 64 KiB and their connection closed — seen from the GraphQL client.
@Suite(.timeLimit(.minutes(2))) struct HostileAnswerHTTPTests {
    static let secret = "hasura-admin-secret-value"

    /// The error `server` throws for one mutation, and how long it took.
    static func failure(_ server: GQLServer) async throws -> (GQLError?, Duration) {
        let started = ContinuousClock.now
        let error = await #expect(throws: GQLError.self) { try await server.mutation("mutation { ping }") }
        return (error, ContinuousClock.now - started)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectToAnotherOriginIsRefusedAndNothingReachesIt(status: Int) async throws {
        let elsewhere = try HostileServer { _, _ in .json(#"{"data":{"ping":true}}"#) }
        let target = "http://user:pw@127.0.0.1:\(elsewhere.port)/graphql?token=query-secret"
        let hostile = try HostileServer { _, _ in .redirect(status, to: target) }
        let server = GQLServer(Hasura: hostile.url, secret: Self.secret)
        let (error, _) = try await Self.failure(server)
        try await server.shutdown()
        #expect(error?.code == .redirect)
        #expect(error?.httpStatus == status)
        let message = error?.message ?? ""
        #expect(message.contains("127.0.0.1:\(elsewhere.port)/graphql"), "\(message)")
        for secret in [Self.secret, "query-secret", "user:pw", "pw@"] {
            #expect(!message.contains(secret), "\(message)")
        }
        // The first origin got the secret (it is the server configured); the second got nothing at all.
        #expect(hostile.requests.first?.head.lowercased().contains("x-hasura-admin-secret") == true)
        #expect(elsewhere.requestCount == 0)
        hostile.stop()
        elsewhere.stop()
    }

    @Test func sameOriginRedirectsAndLoopsAreRefusedToo() async throws {
        // The policy refuses every redirect, on the same origin as well: one request, then the error.
        for location in ["/other", "/graphql"] {
            let hostile = try HostileServer { _, _ in .redirect(307, to: location) }
            let server = GQLServer(HTTP: hostile.url, headers: ["x-api-key": "k"])
            let (error, _) = try await Self.failure(server)
            try await server.shutdown()
            #expect(error?.code == .redirect, "\(location)")
            #expect(error?.message.contains("127.0.0.1:\(hostile.port)\(location)") == true, "\(error?.message ?? "")")
            #expect(hostile.requestCount == 1)
            hostile.stop()
        }
    }

    @Test func aBodyThatStallsOrTricklesEndsAtTheDeadline() async throws {
        var configuration = GQLServer.Configuration()
        configuration.timeout = .seconds(1)
        let head = HostileServer.Reply.head(200, headers: ["Content-Length: 100000"])
        for reply: HostileServer.Reply in [
            .stream(head: head, chunk: [], interval: nil, count: nil),
            // A byte every 100 ms: the read timeout never fires, the overall deadline does.
            .stream(head: head, chunk: [0x20], interval: .milliseconds(100), count: nil),
        ] {
            let hostile = try HostileServer { _, _ in reply }
            let server = GQLServer(HTTP: hostile.url, configuration: configuration)
            let (error, took) = try await Self.failure(server)
            try await server.shutdown()
            #expect(error?.code == .timeout, "\(reply): \(error.map { "\($0)" } ?? "none")")
            // 1 s deadline; 15 s leaves room for a loaded machine while a hang (the defect) still fails.
            #expect(took < .seconds(15), "\(took)")
            hostile.stop()
        }
    }

    @Test func anEndlessErrorBodyEndsAtOnceAndIsNotDrained() async throws {
        for status in [403, 500] {
            let hostile = try HostileServer { _, _ in .endless(status) }
            let server = GQLServer(HTTP: hostile.url)
            let (error, took) = try await Self.failure(server)
            try await server.shutdown()
            #expect(error?.code == .http && error?.httpStatus == status, "\(error.map { "\($0)" } ?? "none")")
            #expect(error.map { $0.message.utf8.count < 2048 } == true)
            // Read up to 64 KiB, then closed: the server's sends fail at once. Draining it at loopback speed
            // would reach gigabytes in the 30 s default timeout; 32 MiB bounds the kernel's socket buffers.
            #expect(took < .seconds(15), "\(took)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(hostile.bodyBytesSent < 32 << 20, "\(hostile.bodyBytesSent)")
            hostile.stop()
        }
    }

    @Test func aGraphQLErrorAnswerIn4xxIsStillReadWhole() async throws {
        // A 400 in application/graphql-response+json is the result: read whole (past the 64 KiB error-body cap).
        let message = String(repeating: "m", count: 100_000)
        let body = #"{"errors":[{"message":""# + message + #""}]}"#
        let hostile = try HostileServer { _, _ in
            .http(400, body, contentType: "application/graphql-response+json")
        }
        let server = GQLServer(HTTP: hostile.url)
        let result = try await server.mutation("mutation { ping }")
        try await server.shutdown()
        #expect(result.errors.first?.message == message)
        hostile.stop()
    }

    @Test func anExchangeOnAClientThatFollowsRedirectsStillRefusesThem() async throws {
        // The exchange refuses an answer its client reached through a redirect (a client not made by the toolkit).
        let elsewhere = try HostileServer { _, _ in .json(#"{"data":{"ping":true}}"#) }
        let hostile = try HostileServer { _, _ in .redirect(302, to: elsewhere.url) }
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .follow(max: 3, allowCycles: false)
        let client = OwnedHTTPClient(HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration))
        let exchange = HTTPExchange(client: client)
        var request = HTTPClientRequest(url: hostile.url)
        request.method = .GET
        let error = await #expect(throws: GQLError.self) {
            _ = try await exchange.collect(request, target: hostile.url, operation: "get")
        }
        #expect(error?.code == .redirect && error?.httpStatus == 302, "\(error.map { "\($0)" } ?? "none")")
        try await client.shutdown()
        hostile.stop()
        elsewhere.stop()
    }
}
