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
            [
                "storage", "ls", "cli-bucket", "--endpoint", storage, "--access-key", "GQLLOCALACCESSKEY000",
                "--secret-key", "wrong",
            ])
        #expect(wrong.contains("SignatureDoesNotMatch") || wrong.contains("signature"), "stderr: \(wrong)")
        // The API's models and the objects are kept in the data folder.
        #expect(FileManager.default.fileExists(atPath: scratch.path("data/graphql.sqlite")))
        #expect(FileManager.default.fileExists(atPath: scratch.path("data/storage/buckets/cli-bucket/bucket.json")))
        #expect(try await server.stop(with: SIGTERM) == 0)
    }

    @Test func theAuthAndPushEmulatorsServeTheCLIsClients() async throws {
        let scratch = try TemporaryDirectory()
        let server = try await ServeProcess.start([
            "--port", "0", "--auth", "--auth-port", "0", "--push", "--push-port", "0", "--data", scratch.path("data"),
            "--endpoints-file", scratch.path("endpoints.json"),
        ])
        let endpoints = try GQLValue(json: Data(contentsOf: URL(fileURLWithPath: scratch.path("endpoints.json"))))
        let auth = try #require(endpoints["auth"]?.stringValue)
        let push = try #require(endpoints["push"]?.stringValue)
        #expect(auth.hasPrefix("http://127.0.0.1:") && push.hasPrefix("http://127.0.0.1:") && auth != push)
        #expect(endpoints["graphql"]?.stringValue == server.http)
        #expect(endpoints["authClientId"] == "gql-local-client")
        #expect(endpoints["authClientSecret"] == "gql-local-client-secret")
        #expect(endpoints["pushAppId"] == "00000000-0000-4000-8000-000000000001")
        #expect(endpoints["pushRestKey"] == "os_v2_app_gqllocalrestkey")
        #expect(endpoints["storage"] == nil && endpoints["storageAccessKey"] == nil)

        // The tenant's domain is the emulator's HOST:PORT (its tokens' issuer is https://HOST:PORT/).
        let domain = String(auth.dropFirst("http://".count))
        let tenant = [
            "--domain", domain, "--client-id", "gql-local-client", "--base-url", auth,
            "--token-file", scratch.path("tokens.json"),
        ]
        let signedUp = try await CLIProcess.succeed(
            ["auth", "signup"] + tenant + ["--email", "cli@example.com", "--password", "correct horse battery"])
        #expect(signedUp.contains("signed up and in as cli@example.com (auth0|"), "\(signedUp)")
        let userId = try #require(signedUp.split(separator: "(").last?.dropLast(2)).description
        _ = try await CLIProcess.succeed(["auth", "signout"] + tenant)
        let signedIn = try await CLIProcess.succeed(
            ["auth", "signin"] + tenant + ["--email", "cli@example.com", "--password", "correct horse battery"])
        #expect(signedIn.contains(userId), "the same user signs in again: \(signedIn)")
        let wrong = try await CLIProcess.fail(
            ["auth", "signin"] + tenant + ["--email", "cli@example.com", "--password", "not the password"])
        #expect(!wrong.contains("not the password"), "stderr: \(wrong)")

        let flags = [
            "--app-id", "00000000-0000-4000-8000-000000000001", "--rest-key", "os_v2_app_gqllocalrestkey",
            "--api-url", push,
        ]
        _ = try await CLIProcess.succeed(["push", "register", "--token", "a1b2c3", "--user", "user-2"] + flags)
        _ = try await CLIProcess.succeed(["push", "send", "--chat", "c1", "--user", "user-2", "Hello"] + flags)
        let inbox = try GQLValue(
            json: try await CLIProcess.succeed(["push", "inbox", "--api-url", push, "--user", "user-2"]))
        #expect(inbox.arrayValue?.count == 1)
        #expect(inbox[0]?["contents"]?["en"] == "Hello")
        #expect(inbox[0]?["data"]?["chatId"] == "c1")
        #expect(inbox[0]?["recipients"]?[0]?["token"] == "a1b2c3")
        #expect(inbox[0]?["recipients"]?[0]?["external_id"] == "user-2")
        let nobody = try GQLValue(
            json: try await CLIProcess.succeed(["push", "inbox", "--api-url", push, "--user", "user-3"]))
        #expect(nobody == [])
        #expect(FileManager.default.fileExists(atPath: scratch.path("data/auth/tenant.json")))
        #expect(try await server.stop(with: SIGTERM) == 0)
    }

    @Test func allWritesEveryEndpointAndCredential() async throws {
        let scratch = try TemporaryDirectory()
        let server = try await ServeProcess.start([
            "--port", "0", "--all", "--storage-port", "0", "--auth-port", "0", "--push-port", "0",
            "--storage-bucket", "all-bucket", "--data", scratch.path("data"),
            "--endpoints-file", scratch.path("endpoints.json"),
        ])
        let endpoints = try GQLValue(json: Data(contentsOf: URL(fileURLWithPath: scratch.path("endpoints.json"))))
        let keys = Set((endpoints.objectValue ?? [:]).keys)
        #expect(
            keys == [
                "graphql", "storage", "auth", "push", "storageAccessKey", "storageSecretKey", "authClientId",
                "authClientSecret", "pushAppId", "pushRestKey",
            ])
        let urls = ["graphql", "storage", "auth", "push"].compactMap { endpoints[$0]?.stringValue }
        #expect(urls.count == 4 && Set(urls).count == 4)
        #expect(urls.allSatisfy { $0.hasPrefix("http://127.0.0.1:") }, "\(urls)")
        #expect(endpoints["graphql"]?.stringValue == server.http)
        // Each emulator answers at its endpoint with the file's credentials.
        let storage = try #require(endpoints["storage"]?.stringValue)
        let listing = try await CLIProcess.succeed([
            "storage", "ls", "all-bucket", "--endpoint", storage, "--access-key",
            try #require(endpoints["storageAccessKey"]?.stringValue), "--secret-key",
            try #require(endpoints["storageSecretKey"]?.stringValue),
        ])
        #expect(listing.isEmpty, "an empty bucket: \(listing)")
        let inbox = try await CLIProcess.succeed([
            "push", "inbox", "--api-url", try #require(endpoints["push"]?.stringValue),
        ])
        #expect(try GQLValue(json: inbox) == [])
        #expect(try await server.stop(with: SIGTERM) == 0)
    }

    /// Two `serve --storage` on one data folder would remove each other's uploads in flight (each cleans the
    /// folder's temporaries at its start): the second is refused, naming the folder and the first's process. A
    /// killed first one leaves no lock behind: the next starts.
    @Test func aSecondStorageEmulatorOnTheSameFolderIsRefused() async throws {
        let scratch = try TemporaryDirectory()
        let flags = ["--port", "0", "--storage", "--storage-port", "0", "--data", scratch.path("data")]
        let first = try await ServeProcess.start(flags)
        let refused = try await CLIProcess.run(["serve"] + flags)
        #expect(refused.exited && refused.status == 1, "the second serve: \(refused.status), \(refused.stderr)")
        let folder = URL(fileURLWithPath: scratch.path("data/storage")).standardizedFileURL.path
        #expect(
            refused.stderr.contains("data folder \(folder) is in use by another storage emulator"), "\(refused.stderr)")
        #expect(refused.stderr.contains("(process "), "\(refused.stderr)")
        #expect(!refused.stdout.contains("HTTP "), "the second one listened: \(refused.stdout)")
        #expect(await first.kill() == .signalled(SIGKILL))
        let next = try await ServeProcess.start(flags)
        #expect(try await next.stop(with: SIGTERM) == 0)
    }

    @Test func emulatorFlagsAreChecked() async throws {
        let port = try await CLIProcess.fail(["serve", "--storage", "--storage-port", "70000"], status: 64)
        #expect(port.contains("--storage-port must be from 0 to 65535"), "stderr: \(port)")
        let empty = try await CLIProcess.fail(["serve", "--storage", "--storage-secret-key", ""], status: 64)
        #expect(empty.contains("--storage-secret-key must not be empty"), "stderr: \(empty)")
    }
}
