import Foundation
import GQLCore
import Testing

/// `gql-cli serve --storage …`: the GraphQL API with the local emulators, state in one folder, every endpoint
/// and credential printed and written to `--endpoints-file`.
@Suite("gql-cli serve with emulators")
struct ServeEmulatorTests {
    @Test func theStorageEmulatorServesGQLStorageBesideTheAPI() async throws {
        let scratch = try TemporaryDirectory()
        let server = try await ServeProcess.start([
            "--port", "0", "--storage", "--storage-port", "0", "--storage-bucket", "cli-bucket",
            "--storage-secret-key", "cli-secret", "--data", scratch.path("data"),
            "--endpoints-file", scratch.path("endpoints.json"),
        ])
        let endpoints = try GQLValue(json: Data(contentsOf: URL(fileURLWithPath: scratch.path("endpoints.json"))))
        #expect(endpoints["graphql"]?.stringValue == server.http)
        let storage = try #require(endpoints["storage"]?.stringValue)
        #expect(storage.hasPrefix("http://127.0.0.1:"))
        #expect(endpoints["storageAccessKey"]?.stringValue == "GQLLOCALACCESSKEY000")
        #expect(endpoints["storageSecretKey"]?.stringValue == "cli-secret")
        #expect(endpoints["auth"] == nil)

        let flags = [
            "--endpoint", storage, "--access-key", "GQLLOCALACCESSKEY000", "--secret-key", "cli-secret",
        ]
        let payload = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try payload.write(to: URL(fileURLWithPath: scratch.path("photo 1.png")))
        _ = try await CLIProcess.succeed(
            ["storage", "upload", scratch.path("photo 1.png"), "s3://cli-bucket/pics/photo 1.png"] + flags)
        let listing = try await CLIProcess.succeed(["storage", "ls", "cli-bucket/pics/"] + flags)
        #expect(listing.contains("70000"))
        let wrong = try await CLIProcess.fail(
            ["storage", "ls", "cli-bucket", "--endpoint", storage, "--access-key", "GQLLOCALACCESSKEY000",
             "--secret-key", "wrong"])
        #expect(wrong.contains("SignatureDoesNotMatch") || wrong.contains("signature"), "stderr: \(wrong)")
        // The API's models and the objects are kept in the data folder.
        #expect(FileManager.default.fileExists(atPath: scratch.path("data/graphql.sqlite")))
        #expect(FileManager.default.fileExists(atPath: scratch.path("data/storage/buckets/cli-bucket/bucket.json")))
        #expect(try await server.stop(with: SIGTERM) == 0)
    }

    @Test func emulatorFlagsAreChecked() async throws {
        let port = try await CLIProcess.fail(["serve", "--storage", "--storage-port", "70000"], status: 64)
        #expect(port.contains("--storage-port must be from 0 to 65535"), "stderr: \(port)")
        let empty = try await CLIProcess.fail(["serve", "--storage", "--storage-secret-key", ""], status: 64)
        #expect(empty.contains("--storage-secret-key must not be empty"), "stderr: \(empty)")
    }
}
