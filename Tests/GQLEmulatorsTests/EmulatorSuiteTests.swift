import Foundation
import GQLCore
import GQLDevServer
import GQLEmulators
import GQLTestSupport
import Testing

/// The composition `gql-cli serve` runs: the GraphQL API with any subset of emulators, state in one folder.
@Suite("Emulator suite")
struct EmulatorSuiteTests {
    @Test func theSuiteServesGraphQLAndStorageAndReportsEveryEndpoint() async throws {
        let directory = try TemporaryDirectory(prefix: "gql-suite")
        defer { directory.cleanup() }
        var configuration = GQLEmulatorSuite.Configuration()
        configuration.dataFolder = try GQLDataFolder(path: directory.path("data"))
        configuration.graphQL?.port = 0
        var storage = GQLStorageEmulator.Configuration()
        storage.port = 0
        configuration.storage = storage
        let suite = try GQLEmulatorSuite(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await suite.run() }
            let endpoints = try await suite.endpoints()
            #expect(endpoints.graphql?.hasPrefix("http://127.0.0.1:") == true)
            #expect(endpoints.storage?.hasPrefix("http://127.0.0.1:") == true)
            #expect(endpoints.storageAccessKey == GQLEmulatorCredentials().storageAccessKey)
            #expect(endpoints.auth == nil)
            let json = try GQLValue(json: String(decoding: try endpoints.json(), as: UTF8.self))
            #expect(json["storageSecretKey"]?.stringValue == GQLEmulatorCredentials().storageSecretKey)
            #expect(json["push"] == nil)
            #expect(FileManager.default.fileExists(atPath: directory.path("data/graphql.sqlite")))
            #expect(FileManager.default.fileExists(atPath: directory.path("data/storage")))
            await suite.shutdown()
            try await group.waitForAll()
        }
    }

    @Test func credentialsDescribeNoSecret() {
        let text = String(describing: GQLEmulatorCredentials())
        #expect(!text.contains(GQLEmulatorCredentials().storageSecretKey))
        #expect(!text.contains(GQLEmulatorCredentials().authClientSecret))
        #expect(!text.contains(GQLEmulatorCredentials().pushRestKey))
    }
}
