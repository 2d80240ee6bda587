import AsyncHTTPClient
import Foundation
import GQLCore
import GQLDevServer
import GQLEmulators
import GQLServices
import GQLTestSupport
import NIOCore
import Testing

/// The composition `gql-cli serve` runs: the GraphQL API with any subset of emulators, state in one folder.
@Suite("Emulator suite")
struct EmulatorSuiteTests {
    /// Runs `body` against a running suite of the GraphQL API on a free port with what `configure` adds, its state
    /// in a fresh folder (`data` of the temporary directory given), and shuts it down afterwards.
    static func withSuite(
        _ configure: (inout GQLEmulatorSuite.Configuration) -> Void,
        _ body: (GQLEmulatorSuite.Endpoints, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "gql-suite")
        defer { directory.cleanup() }
        var configuration = GQLEmulatorSuite.Configuration()
        configuration.dataFolder = try GQLDataFolder(path: directory.path("data"))
        configuration.graphQL?.port = 0
        configure(&configuration)
        let suite = try GQLEmulatorSuite(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await suite.run() }
            do {
                try await body(try await suite.endpoints(), directory)
            } catch {
                await suite.shutdown()
                try? await group.waitForAll()
                throw error
            }
            await suite.shutdown()
            try await group.waitForAll()
        }
    }

    @Test func theSuiteServesGraphQLAndStorageAndReportsEveryEndpoint() async throws {
        var storage = GQLStorageEmulator.Configuration()
        storage.port = 0
        try await Self.withSuite({ $0.storage = storage }) { endpoints, directory in
            #expect(endpoints.graphql?.hasPrefix("http://127.0.0.1:") == true)
            #expect(endpoints.storage?.hasPrefix("http://127.0.0.1:") == true)
            #expect(endpoints.storageAccessKey == GQLEmulatorCredentials().storageAccessKey)
            #expect(endpoints.auth == nil)
            let json = try GQLValue(json: String(decoding: try endpoints.json(), as: UTF8.self))
            #expect(json["storageSecretKey"]?.stringValue == GQLEmulatorCredentials().storageSecretKey)
            #expect(json["push"] == nil)
            #expect(FileManager.default.fileExists(atPath: directory.path("data/graphql.sqlite")))
            #expect(FileManager.default.fileExists(atPath: directory.path("data/storage")))
        }
    }

    @Test func theGraphQLAPITakesTheUsersAccessTokensNotIDOrManagementTokens() async throws {
        var auth = GQLAuthEmulator.Configuration()
        auth.port = 0
        auth.domain = "auth.test"
        auth.passwordHashCost = .init(n: 1 << 10, r: 8, p: 1)
        try await Self.withSuite({ $0.auth = auth }) { endpoints, _ in
            let rest = GQLREST(baseURL: try #require(endpoints.auth))
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = client.shutdown() }
            _ = try await rest.invoke(
                .post, "dbconnections/signup",
                json: [
                    "client_id": .string(auth.clientId), "email": "ann@example.com", "password": "correct horse",
                    "connection": .string(auth.connection),
                ])
            let user = try await rest.invoke(
                .post, "oauth/token",
                form: [
                    "grant_type": "password", "client_id": auth.clientId, "username": "ann@example.com",
                    "password": "correct horse", "scope": "openid",
                ])
            let management = try await rest.invoke(
                .post, "oauth/token",
                form: [
                    "grant_type": "client_credentials", "client_id": auth.clientId, "client_secret": auth.clientSecret,
                    "audience": "https://auth.test/api/v2/",
                ])
            let graphQL = try #require(endpoints.graphql)
            func status(_ token: GQLValue?) async throws -> UInt {
                var request = HTTPClientRequest(url: graphQL)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "Authorization", value: "Bearer " + (token?.stringValue ?? ""))
                request.body = .bytes(ByteBuffer(string: #"{"query":"{ __typename }"}"#))
                return try await client.execute(request, timeout: .seconds(10)).status.code
            }
            #expect(try await status(user["access_token"]) != 401)
            #expect(try await status(user["id_token"]) == 401)
            #expect(try await status(management["access_token"]) == 401)
            try await rest.shutdown()
        }
    }

    @Test func credentialsDescribeNoSecret() {
        let text = String(describing: GQLEmulatorCredentials())
        #expect(!text.contains(GQLEmulatorCredentials().storageSecretKey))
        #expect(!text.contains(GQLEmulatorCredentials().authClientSecret))
        #expect(!text.contains(GQLEmulatorCredentials().pushRestKey))
    }
}
