import Foundation
import GQLCore
import GQLEmulators
import GQLServices
import GQLTestSupport

/// A storage emulator on a free port with its own data folder, and a GQLStorage client of it.
struct StorageFixture {
    let directory: TemporaryDirectory
    let started: GQLStartedEmulator
    let configuration: GQLStorageEmulator.Configuration
    let storage: GQLStorage

    static func with<T>(
        buckets: [String] = ["bucket"], secret: String? = nil,
        configure: (inout GQLStorageEmulator.Configuration) -> Void = { _ in },
        client: (inout GQLStorage.Configuration) -> Void = { _ in },
        _ body: (StorageFixture) async throws -> T
    ) async throws -> T {
        let directory = try TemporaryDirectory(prefix: "gql-s3emu")
        defer { directory.cleanup() }
        var configuration = GQLStorageEmulator.Configuration()
        configuration.port = 0
        configuration.buckets = buckets
        configuration.dataFolder = try GQLDataFolder(path: directory.path("data"))
        configure(&configuration)
        let started = try await GQLStorageEmulator(configuration: configuration).start()
        var clientConfiguration = GQLStorage.Configuration()
        clientConfiguration.backoff = GQLBackoff(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        clientConfiguration.maximumAttempts = 1
        client(&clientConfiguration)
        let storage = GQLStorage(
            endpoint: started.url, region: configuration.region, accessKey: configuration.accessKey,
            secretKey: secret ?? configuration.secretKey, pathStyle: true, configuration: clientConfiguration)
        let fixture = StorageFixture(
            directory: directory, started: started, configuration: configuration, storage: storage)
        do {
            let result = try await body(fixture)
            try await storage.shutdown()
            await started.shutdown()
            return result
        } catch {
            try? await storage.shutdown()
            await started.shutdown()
            throw error
        }
    }

    /// Runs one check of a client script in Tests/Interop (`s3_client_checks.py`, `aws_cli_checks.py`) against a
    /// fresh emulator with the bucket `bucket`, and returns what the script saw. The script gets the endpoint,
    /// the credentials, the region, the bucket and a scratch folder of its own.
    static func clientCheck(
        _ script: String, _ check: String, bucket: String,
        configure: (inout GQLStorageEmulator.Configuration) -> Void = { _ in }
    ) async throws -> GQLValue {
        try await with(buckets: [bucket], configure: configure) { fixture in
            let spec: GQLValue = [
                "endpoint": .string(fixture.started.url), "accessKey": .string(fixture.configuration.accessKey),
                "secretKey": .string(fixture.configuration.secretKey), "region": .string(fixture.configuration.region),
                "bucket": .string(bucket), "scratch": .string(fixture.directory.url.path), "check": .string(check),
            ]
            let output = try await PythonPeer.run(script, input: Data(spec.jsonString().utf8))
            return try GQLValue(json: output)
        }
    }

    /// `count` seeded pseudo-random bytes.
    static func bytes(_ count: Int, seed: UInt64) -> Data { TestSeed.bytes(count, seed: seed) }
}
