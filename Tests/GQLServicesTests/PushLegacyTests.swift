import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLPush with a legacy REST API key, against the stand-in's v1 mode (Tests/Interop/onesignal_peer.py `--v1`), which
/// checks the request shapes, `Authorization: Basic`, the identity hashes, and records every request.
@Suite(.serialized) struct PushLegacyTests {
    typealias StandIn = OneSignalStandIn

    @Test func registersTheDeviceThenTheUserWithItsIdentityHashUnasked() async throws {
        try await StandIn.withPeer(key: StandIn.legacyKey, ["--v1", "--identity-verification"]) { url, requests in
            try await StandIn.withPush(url, key: StandIn.legacyKey) { push in
                #expect(push.keyKind == .legacy)
                #expect(GQLPush.hex(StandIn.deviceToken) == "a1b200ff10")
                let player = try await push.token(StandIn.deviceToken)
                #expect(push.playerId == player && push.subscriptionId == player)
                // No flag asked for it: the hash goes whenever the key is at hand, and the app with verification
                // on accepts the user.
                try await push.register("user-1001")
                #expect(push.userId == "user-1001")

                let recorded = try await requests()
                #expect(recorded.count == 2)
                let add = recorded[0]
                #expect(add["method"] == "POST" && add["path"] == "/api/v1/players")
                #expect(add["body"]?["app_id"] == .string(StandIn.appId))
                #expect(add["body"]?["identifier"] == "a1b200ff10")
                #expect(add["body"]?["device_type"] == 0)
                #expect(add["headers"]?["authorization"] == nil)  // device calls carry no REST key
                let edit = recorded[1]
                #expect(edit["method"] == "PUT" && edit["path"] == .string("/api/v1/players/\(player)"))
                #expect(edit["body"]?["external_user_id"] == "user-1001")
                // The peer accepted it, so it is hex(HMAC-SHA256(REST key, user id)); it is lowercase hex.
                #expect(edit["body"]?["external_user_id_auth_hash"]?.stringValue?.count == 64)
            }
        }
    }

    @Test func aUserRegisteredBeforeTheTokenGoesWithTheDevice() async throws {
        try await StandIn.withPeer(key: StandIn.legacyKey, ["--v1"]) { url, requests in
            try await StandIn.withPush(url, key: StandIn.legacyKey) { push in
                try await push.register("early-user")
                #expect(try await requests().isEmpty)
                try await push.token(StandIn.deviceToken)
                let add = try #require(try await requests().first)
                #expect(add["body"]?["external_user_id"] == "early-user")
                #expect(add["body"]?["external_user_id_auth_hash"]?.stringValue?.count == 64)
                // v1 still answers recipients, and GQLPush passes it on.
                #expect(try await push.send(chatId: "c1", userIds: ["early-user"], text: "hi").recipients == 1)
            }
        }
    }

    @Test func sendSurfacesOneSignalsErrorsIn200Answers() async throws {
        try await StandIn.withPeer(key: StandIn.legacyKey, ["--v1"]) { url, requests in
            try await StandIn.withPush(url, key: StandIn.legacyKey) { push in
                try await push.token(StandIn.deviceToken)
                try await push.register("u1")
                let sent = try await push.send(chatId: "chat-7", userIds: ["u1", "ghost"], text: "Hello ✓")
                #expect(sent.recipients == 1)
                #expect(sent.invalidUserIds == ["ghost"])
                #expect(!sent.id.isEmpty)
                let notification = try #require(try await requests().last)
                #expect(notification["path"] == "/api/v1/notifications")
                #expect(notification["headers"]?["authorization"] == .string("Basic \(StandIn.legacyKey)"))
                #expect(notification["body"]?["include_external_user_ids"] == ["u1", "ghost"])
                #expect(notification["body"]?["channel_for_external_user_ids"] == "push")
                #expect(notification["body"]?["contents"] == ["en": "Hello ✓"])
                #expect(notification["body"]?["data"] == ["chatId": "chat-7"])

                let nobody = await #expect(throws: GQLError.self) {
                    try await push.send(chatId: "chat-7", userIds: ["ghost"], text: "x")
                }
                #expect(nobody?.serviceCode == "no_recipients")
                #expect(nobody?.message.contains("not subscribed") == true)

                try await push.unregister()
                let edit = try #require(try await requests().last)
                #expect(edit["body"]?["external_user_id"] == "")
                #expect(push.playerId != nil)  // the device stays registered
                await #expect(throws: GQLError.self) { try await push.send(chatId: "c", userIds: ["u1"], text: "x") }
            }
        }
    }

    @Test func badInputAWrongKeyAndTheUsersAPIAreRefused() async throws {
        try await StandIn.withPeer(key: StandIn.legacyKey, ["--v1"]) { url, requests in
            try await StandIn.withPush(url, key: "wrong-key-value") { push in
                let wrong = await #expect(throws: GQLError.self) {
                    try await push.send(chatId: "c", userIds: ["u1"], text: "x")
                }
                #expect(wrong?.httpStatus == 403)
                #expect(wrong?.message.contains("wrong-key-value") == false)
                for ids in [[], [""], Array(repeating: "u", count: 2001)] {
                    let error = await #expect(throws: GQLError.self) {
                        try await push.send(chatId: "c", userIds: ids, text: "x")
                    }
                    #expect(error?.code == .invalidArgument)
                }
                await #expect(throws: GQLError.self) { try await push.token(Data()) }
                await #expect(throws: GQLError.self) { try await push.register("") }
                // The v1 API has no users: a legacy key is told so before anything is sent.
                let users = await #expect(throws: GQLError.self) { try await push.createUser(externalId: "u") }
                #expect(users?.code == .invalidArgument && users?.message.contains("App API key") == true)
                let reached = try await requests().count
                #expect(reached == 1)  // only the refused notification reached the peer
            }
        }
    }

    @Test func theStaticFormUsesTheSharedInstance() async throws {
        try await StandIn.withPeer(key: StandIn.legacyKey, ["--v1"]) { url, requests in
            GQLPush.setup(StandIn.appId, StandIn.legacyKey, baseURL: url)
            #expect(GQLPush.token(StandIn.deviceToken) == "a1b200ff10")
            try await GQLPush.register("static-user")  // waits for the registration started above
            let sent = try await GQLPush.send(chatId: "c", userIds: ["static-user"], text: "hi")
            #expect(sent.recipients == 1)
            let done = GQLLocked<(String?, Bool)?>(nil)
            await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                GQLPush.token(StandIn.deviceToken) { player, error in
                    done.withLock { $0 = (player, error == nil) }
                    resume.resume()
                }
            }
            #expect(done.withLock { $0?.1 } == true)
            #expect(done.withLock { $0?.0 } == GQLPush.shared?.playerId)  // the same device, the same player
            #expect(try await requests().map { $0["method"] } == ["POST", "PUT", "POST", "POST"])
            try await GQLPush.shared?.shutdown()
        }
    }
}
