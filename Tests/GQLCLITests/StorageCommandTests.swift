import Foundation
import GQLTestSupport
import Testing

/// `gql-cli storage` against moto's S3 server with request authentication on (Tests/Interop/s3_peer.py).
@Suite(.serialized) struct StorageCommandTests {
    struct PeerInfo: Decodable {
        var port: Int
        var accessKey: String
        var secretKey: String
    }

    private static func withPeer(_ body: (PeerInfo, [String]) async throws -> Void) async throws {
        try await PythonPeer.with("s3_peer.py") { peer in
            let info = try JSONDecoder().decode(PeerInfo.self, from: Data(peer.ready.utf8))
            let flags = [
                "--endpoint", "http://127.0.0.1:\(info.port)", "--access-key", info.accessKey, "--secret-key",
                info.secretKey,
            ]
            try await body(info, flags)
        }
    }

    @Test func aFileMakesTheRoundTrip() async throws {
        try await Self.withPeer { _, flags in
            let scratch = try TemporaryDirectory()
            let payload = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try payload.write(to: URL(fileURLWithPath: scratch.path("photo 1.png")))
            #expect(try await CLIProcess.succeed(["storage", "mb", "cli-bucket"] + flags).contains("cli-bucket"))
            let uploaded = try await CLIProcess.succeed(
                ["storage", "upload", scratch.path("photo 1.png"), "s3://cli-bucket/pics/photo 1.png"] + flags)
            #expect(uploaded.contains("cli-bucket/pics/photo 1.png"))
            let listing = try await CLIProcess.succeed(["storage", "ls", "cli-bucket/pics/"] + flags)
            #expect(listing.contains("70000"))
            #expect(listing.contains("pics/photo 1.png"))
            let json = try await CLIProcess.succeed(["storage", "ls", "cli-bucket", "--json"] + flags)
            #expect(json.contains("\"key\":\"pics/photo 1.png\""))
            _ = try await CLIProcess.succeed(
                ["storage", "download", "cli-bucket/pics/photo 1.png", scratch.path("back.png")] + flags)
            #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path("back.png"))) == payload)
            let url = try await CLIProcess.succeed(
                ["storage", "presign", "cli-bucket/pics/photo 1.png", "--expires", "60"] + flags)
            #expect(url.hasPrefix("http://127.0.0.1:"))
            #expect(url.contains("/cli-bucket/pics/photo%201.png?"))
            #expect(url.contains("X-Amz-Expires=60&"))
            _ = try await CLIProcess.succeed(["storage", "delete", "cli-bucket/pics/photo 1.png"] + flags)
            #expect(try await CLIProcess.succeed(["storage", "ls", "cli-bucket"] + flags).isEmpty)
        }
    }

    @Test func refusalsAreOneLineWithoutTheSecret() async throws {
        try await Self.withPeer { info, flags in
            let wrong = flags.map { $0 == info.secretKey ? "wrong-secret-value-42" : $0 }
            let message = try await CLIProcess.fail(["storage", "mb", "refused-bucket"] + wrong)
            #expect(message.contains("SignatureDoesNotMatch"))
            #expect(!message.contains("wrong-secret-value-42"))
            let missing = try await CLIProcess.fail(["storage", "download", "nowhere/key", "/dev/null"] + flags)
            #expect(missing.contains("NoSuchBucket"))
        }
    }

    @Test func missingCredentialsAndBadArgumentsAreUsageErrors() async throws {
        let noKey = try await CLIProcess.fail(["storage", "ls", "bucket", "--endpoint", "http://127.0.0.1:9"])
        #expect(noKey.contains("AWS_ACCESS_KEY_ID"))
        let badPath = try await CLIProcess.fail(
            ["storage", "delete", "no-slash", "--access-key", "a", "--secret-key", "b"], status: 64)
        #expect(badPath.contains("no-slash"))
    }
}
