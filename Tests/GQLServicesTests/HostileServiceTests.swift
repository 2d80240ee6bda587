import AsyncHTTPClient
import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLREST, GQLAuth, GQLPush and GQLStorage against servers that redirect, stall, trickle or never end their
/// bodies (``HostileServer``): no redirect is followed (the second origin gets nothing: no API key, password,
/// client secret, signature or body), every collected call ends at its deadline, error bodies are read up to 64 KiB
/// and their connection closed, and no error quotes a secret.
@Suite(.timeLimit(.minutes(2))) struct HostileServiceTests {
    static let secrets = ["rest-api-key", "client-secret-value", "p4ssword-value", "session-token-value", "s3cr3t-key"]

    /// The error `call` throws and how long it took.
    static func failure(_ call: () async throws -> Void) async -> (GQLError?, Duration) {
        let started = ContinuousClock.now
        let error = await #expect(throws: GQLError.self) { try await call() }
        return (error, ContinuousClock.now - started)
    }

    static func expectNoSecret(_ error: GQLError?, _ context: String = "") {
        let text = error.map { "\($0) \($0.message)" } ?? ""
        for secret in secrets { #expect(!text.contains(secret), "\(context): \(text)") }
    }

    /// A server redirecting every request with `status` to `elsewhere`, whose query names a secret.
    static func redirecting(_ status: Int, to elsewhere: HostileServer) throws -> HostileServer {
        try HostileServer { _, _ in .redirect(status, to: "http://127.0.0.1:\(elsewhere.port)/x?sig=s3cr3t-key") }
    }

    /// Clients whose timeout is not under test get 10 s: a parallel run of the whole suite on two cores can hold a
    /// request back for seconds, and these tests decide by the error's kind, not by the clock.
    static func storage(_ hostile: HostileServer, timeout: Duration = .seconds(10)) -> GQLStorage {
        var configuration = GQLStorage.Configuration()
        configuration.timeout = timeout
        configuration.maximumAttempts = 1
        return GQLStorage(
            endpoint: "http://127.0.0.1:\(hostile.port)", accessKey: "AKIDEXAMPLE", secretKey: "s3cr3t-key",
            sessionToken: "session-token-value", configuration: configuration)
    }

    static func auth(_ hostile: HostileServer, timeout: Duration = .seconds(10)) -> GQLAuth {
        var configuration = GQLAuth.Configuration()
        configuration.timeout = timeout
        return GQLAuth(
            domain: "tenant.example", clientId: "client", clientSecret: "client-secret-value",
            baseURL: "http://127.0.0.1:\(hostile.port)", configuration: configuration)
    }

    // MARK: Redirects

    @Test(arguments: [301, 302, 303, 307, 308])
    func noClientFollowsARedirectToAnotherOrigin(status: Int) async throws {
        let elsewhere = try HostileServer { _, _ in .json("{}") }
        let hostile = try Self.redirecting(status, to: elsewhere)

        let rest = GQLREST(baseURL: "http://127.0.0.1:\(hostile.port)", headers: ["X-Api-Key": "rest-api-key"])
        var (error, _) = await Self.failure { try await rest.invoke(.post, "api", json: ["key": "rest-api-key"]) }
        #expect(error?.code == .redirect && error?.httpStatus == status, "REST \(error.map { "\($0)" } ?? "")")
        #expect(error?.message.contains("127.0.0.1:\(elsewhere.port)/x") == true)
        Self.expectNoSecret(error, "REST")
        try await rest.shutdown()

        let auth = Self.auth(hostile)
        (error, _) = await Self.failure { try await auth.signIn(email: "a@example.com", password: "p4ssword-value") }
        #expect(error?.code == .redirect, "Auth \(error.map { "\($0)" } ?? "")")
        Self.expectNoSecret(error, "Auth")
        #expect(!auth.isSignedIn)
        try await auth.shutdown()

        let push = GQLPush(appId: "app", restKey: "rest-api-key", baseURL: "http://127.0.0.1:\(hostile.port)")
        (error, _) = await Self.failure { _ = try await push.send(chatId: "c", userIds: ["u"], text: "hi") }
        #expect(error?.code == .redirect, "Push \(error.map { "\($0)" } ?? "")")
        Self.expectNoSecret(error, "Push")
        try await push.shutdown()

        let storage = Self.storage(hostile)
        (error, _) = await Self.failure { try await storage.upload("bucket", "key", Data("payload".utf8)) }
        #expect(error?.code == .redirect, "Storage \(error.map { "\($0)" } ?? "")")
        Self.expectNoSecret(error, "Storage")
        try await storage.shutdown()

        // Every client reached the first origin; the second got no request at all: no key, password, secret,
        // signature, session token or body.
        #expect(hostile.requestCount == 4)
        #expect(elsewhere.requestCount == 0)
        hostile.stop()
        elsewhere.stop()
    }

    @Test func anAppsClientThatFollowsRedirectsGetsThePolicyToo() async throws {
        let elsewhere = try HostileServer { _, _ in .json("{}") }
        let hostile = try Self.redirecting(302, to: elsewhere)
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .follow(max: 5, allowCycles: false)
        let shared = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let rest = GQLREST(
            baseURL: "http://127.0.0.1:\(hostile.port)", headers: ["X-Api-Key": "rest-api-key"], httpClient: shared)
        let (error, _) = await Self.failure { try await rest.invoke(.get, "me") }
        #expect(error?.code == .redirect, "\(error.map { "\($0)" } ?? "")")
        #expect(elsewhere.requestCount == 0)
        try await rest.shutdown()
        // The app's client is the app's: still usable after the REST client shut down its own.
        var request = HTTPClientRequest(url: elsewhere.url)
        request.method = .GET
        let response = try await shared.execute(request, timeout: .seconds(5))
        #expect(response.status == .ok)
        try await shared.shutdown()
        hostile.stop()
        elsewhere.stop()
    }

    @Test func anAppsClientLendsItsSettings() async throws {
        // The app's client goes through a proxy; so does the REST client's own client made from it: the request
        // reaches the proxy (a client without the app's settings would look the host up itself, and fail).
        let proxy = try HostileServer { _, _ in .http(502, "no upstream") }
        var configuration = HTTPClient.Configuration()
        configuration.proxy = .server(host: "127.0.0.1", port: proxy.port)
        let shared = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let rest = GQLREST(baseURL: "http://service.invalid", httpClient: shared)
        // How the call ends depends on how AsyncHTTPClient speaks to a proxy (CONNECT or an absolute URI); where
        // the request went is the point.
        _ = try? await rest.invoke(.get, "me")
        #expect(proxy.requestCount == 1)
        #expect(proxy.requests.first.map { $0.head.contains("service.invalid") } == true)
        try await rest.shutdown()
        try await shared.shutdown()
        proxy.stop()
    }

    // MARK: Deadlines

    @Test func aStalledOrTricklingBodyEndsEveryCollectedCallAtItsDeadline() async throws {
        let head = HostileServer.Reply.head(200, headers: ["Content-Length: 100000"])
        for reply: HostileServer.Reply in [
            .stream(head: head, chunk: [], interval: nil, count: nil),
            .stream(head: head, chunk: [0x20], interval: .milliseconds(100), count: nil),
        ] {
            let hostile = try HostileServer { _, _ in reply }
            let base = "http://127.0.0.1:\(hostile.port)"
            // A deadline of four trickle intervals: a timeout reset by each byte would never end the trickle.
            let deadline = Duration.milliseconds(400)
            let rest = GQLREST(baseURL: base, timeout: deadline)
            let auth = Self.auth(hostile, timeout: deadline)
            let push = GQLPush(appId: "app", restKey: "rest-api-key", baseURL: base, timeout: deadline)
            let storage = Self.storage(hostile, timeout: deadline)
            let calls: [(String, () async throws -> Void)] = [
                ("REST", { try await rest.invoke(.get, "me") }),
                ("Auth sign-in", { try await auth.signIn(email: "a@example.com", password: "p4ssword-value") }),
                ("Push send", { _ = try await push.send(chatId: "c", userIds: ["u"], text: "hi") }),
                ("Storage list", { _ = try await storage.list("bucket").first { _ in true } }),
            ]
            for (name, call) in calls {
                let (error, took) = await Self.failure(call)
                #expect(error?.code == .timeout, "\(name) \(reply): \(error.map { "\($0)" } ?? "none")")
                Self.expectNoSecret(error, name)
                // 400 ms deadline; 15 s leaves room for a loaded machine, while the defect (no end at all) fails.
                #expect(took < .seconds(15), "\(name): \(took)")
            }
            try await rest.shutdown()
            try await auth.shutdown()
            try await push.shutdown()
            try await storage.shutdown()
            hostile.stop()
        }
    }

    @Test func aDownloadStopsAtAStallButNotWhileItKeepsMoving() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Fifteen bytes, one every 200 ms: 3 s in all, longer than the 2.5 s timeout, never stalled that long. A
        // run in which the server itself was held back past the timeout (a full parallel run on two cores can) says
        // nothing and is tried again, three times at most.
        let timeout = Duration.milliseconds(2500)
        var conclusive = false
        for _ in 1...3 where !conclusive {
            let moving = try HostileServer { _, _ in
                .stream(
                    head: HostileServer.Reply.head(200, headers: ["Content-Length: 15"]), chunk: [0x61],
                    interval: .milliseconds(200), count: 15)
            }
            let storage = Self.storage(moving, timeout: timeout)
            let file = directory.appendingPathComponent("slow.bin")
            do {
                try await storage.download("bucket", "slow", to: file)
                #expect(try Data(contentsOf: file) == Data(repeating: 0x61, count: 15))
                conclusive = true
            } catch let error as GQLError where error.code == .timeout && moving.longestSendGap >= timeout / 2 {
                // The server was late, not the client wrong.
            }
            try await storage.shutdown()
            moving.stop()
        }
        #expect(conclusive, "the server was held back in every run")

        let stalled = try HostileServer { _, _ in
            .stream(
                head: HostileServer.Reply.head(200, headers: ["Content-Length: 10"]), chunk: [0x61], interval: nil,
                count: 3)
        }
        let stalling = Self.storage(stalled, timeout: .seconds(1))
        let (error, took) = await Self.failure {
            try await stalling.download("bucket", "stalls", to: directory.appendingPathComponent("stalled.bin"))
        }
        #expect(error?.code == .timeout, "\(error.map { "\($0)" } ?? "none")")
        #expect(took < .seconds(15), "\(took)")
        try await stalling.shutdown()
        stalled.stop()
    }

    // MARK: Error bodies

    @Test func anEndlessErrorBodyEndsAtOnceEverywhere() async throws {
        let hostile = try HostileServer { _, _ in .endless(403) }
        let base = "http://127.0.0.1:\(hostile.port)"
        let rest = GQLREST(baseURL: base)
        let auth = Self.auth(hostile)
        let push = GQLPush(appId: "app", restKey: "rest-api-key", baseURL: base)
        var configuration = GQLStorage.Configuration()
        configuration.maximumAttempts = 1
        let storage = GQLStorage(
            endpoint: base, accessKey: "AKIDEXAMPLE", secretKey: "s3cr3t-key", configuration: configuration)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("endless-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let calls: [(String, () async throws -> Void)] = [
            ("REST", { try await rest.invoke(.get, "me") }),
            ("Auth sign-in", { try await auth.signIn(email: "a@example.com", password: "p4ssword-value") }),
            ("Push send", { _ = try await push.send(chatId: "c", userIds: ["u"], text: "hi") }),
            ("Storage download", { _ = try await storage.download("bucket", "key") }),
            ("Storage download to a file", { try await storage.download("bucket", "key", to: file) }),
        ]
        for (name, call) in calls {
            let before = hostile.bodyBytesSent
            let (error, took) = await Self.failure(call)
            #expect(error?.httpStatus == 403, "\(name): \(error.map { "\($0)" } ?? "none")")
            #expect(error.map { $0.message.utf8.count < 2048 } == true, "\(name)")
            // The default timeouts are 30 s and more: an answer read to its end (never) or drained would not be
            // back within 15 s, nor would the server's sends stop.
            #expect(took < .seconds(15), "\(name): \(took)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(hostile.bodyBytesSent - before < 32 << 20, "\(name): \(hostile.bodyBytesSent - before)")
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try await rest.shutdown()
        try await auth.shutdown()
        try await push.shutdown()
        try await storage.shutdown()
        hostile.stop()
    }

    // MARK: Tokens

    @Test func aTokenWithAControlCharacterIsRefusedAndNeverStored() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appendingPathComponent("auth.json").path
        for (field, value) in [
            ("access_token", "abc\\r\\nX-Injected: 1"), ("access_token", "abc\\ndef"), ("access_token", "a\\u0000b"),
            ("id_token", "e30.e30.\\r\\nsig"), ("refresh_token", "r\\u001b[31m"), ("token_type", "Bearer\\r\\nX: y"),
            ("access_token", "tab\\there"),
        ] {
            var answer = [
                "access_token": #""good-access-token""#, "id_token": #""e30.e30.sig""#,
                "refresh_token": #""good-refresh""#, "token_type": #""Bearer""#,
            ]
            answer[field] = "\"\(value)\""
            let body = "{" + answer.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + #","expires_in":3600}"#
            let hostile = try HostileServer { _, _ in .json(body) }
            var configuration = GQLAuth.Configuration()
            configuration.timeout = .seconds(5)
            let auth = GQLAuth(
                domain: "tenant.example", clientId: "client", tokens: .file(tokenFile),
                baseURL: "http://127.0.0.1:\(hostile.port)", configuration: configuration)
            let (error, _) = await Self.failure {
                try await auth.signIn(email: "a@example.com", password: "p4ssword-value")
            }
            #expect(error?.code == .invalidResponse, "\(field) \(value): \(error.map { "\($0)" } ?? "none")")
            #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
            #expect(error.map { !$0.message.contains("X-Injected") && !$0.message.contains("\r") } == true)
            #expect(!auth.isSignedIn)
            #expect(!FileManager.default.fileExists(atPath: tokenFile), "\(field): stored")
            try await auth.shutdown()
            hostile.stop()
        }
    }

    @Test func storedTokensWithAControlCharacterAreNotUsed() async throws {
        let store = GQLAuth.Storage.memory
        try store.store.save(
            GQLAuth.Tokens(
                accessToken: "abc\r\nX-Injected: 1", idToken: "e30.e30.sig", refreshToken: nil,
                expiresAt: Date().addingTimeInterval(3600)))
        let auth = GQLAuth(domain: "tenant.example", clientId: "client", tokens: store)
        let (error, _) = await Self.failure { _ = try await auth.accessToken() }
        #expect(error?.code == .invalidToken, "\(error.map { "\($0)" } ?? "none")")
        #expect(error.map { !$0.message.contains("X-Injected") } == true)
        try await auth.shutdown()
    }
}
