import Foundation
import GQLCore
import GQLTestSupport
import Testing

/// `gql-cli push register|unregister|send` against the OneSignal stand-in (Tests/Interop/onesignal_peer.py).
@Suite struct PushCommandTests {
    static let appId = "cli-app"
    static let restKey = "cli-rest-key-value"

    @Test func registerSendAndUnregister() async throws {
        try await PythonPeer.with("onesignal_peer.py", [Self.appId, Self.restKey, "--identity-verification"]) { peer in
            let app = ["--app-id", Self.appId, "--rest-key", Self.restKey, "--api-url", peer.ready]
            let player = try await CLIProcess.succeed(
                ["push", "register"] + app + ["--identity-verification", "--token", "a1b2c3", "--user", "u-1"])
            #expect(!player.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)

            let sent = try await CLIProcess.run(
                ["push", "send"] + app + ["--chat", "c1", "--user", "u-1", "--user", "ghost", "Hello"])
            #expect(sent.exited && sent.status == 0, "\(sent.stderr)")
            let answer = try GQLValue(json: sent.stdout)
            #expect(answer["recipients"] == 1)
            #expect(answer["invalidUserIds"] == ["ghost"])
            #expect(sent.stderr.contains("no device for: ghost"))

            let again = try await CLIProcess.succeed(
                ["push", "unregister"] + app + ["--identity-verification", "--token", "a1b2c3"])
            #expect(again == player)  // the same device
            let nobody = try await CLIProcess.fail(["push", "send"] + app + ["--chat", "c1", "--user", "u-1", "Hi"])
            #expect(nobody.contains("sent the notification to nobody"), "\(nobody)")

            let unverified = try await CLIProcess.fail(
                ["push", "register"] + app + ["--token", "a1b2c3", "--user", "u-2"])
            #expect(unverified.contains("auth hash"), "\(unverified)")
            #expect(!unverified.contains(Self.restKey))
        }
    }

    @Test func badArgumentsAreRefused() async throws {
        let noUser = try await CLIProcess.fail(
            ["push", "send", "--app-id", "a", "--rest-key", "k", "--chat", "c", "text"], status: 64)
        #expect(noUser.contains("--user"))
        let badToken = try await CLIProcess.fail(
            ["push", "register", "--app-id", "a", "--rest-key", "k", "--token", "xyz"], status: 64)
        #expect(badToken.contains("--token"))
    }
}
