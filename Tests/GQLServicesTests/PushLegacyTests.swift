import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLPush with a legacy REST API key against OneSignal's v1 API, at both servers (``PushServer``: the stand-in's v1
/// mode, Tests/Interop/onesignal_peer.py `--v1`, which records every request, and GQLEmulators' OneSignal
/// emulator): the request shapes, `Authorization: Basic`, the identity hashes.
@Suite(.serialized) struct PushLegacyTests {
    typealias StandIn = OneSignalStandIn

    @Test(arguments: PushServer.allCases)
    func registersTheDeviceThenTheUserWithItsIdentityHashUnasked(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.legacyKey, ["--v1", "--identity-verification"]) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.legacyKey) { push in
                #expect(push.keyKind == .legacy)
                #expect(GQLPush.hex(StandIn.deviceToken) == "a1b200ff10")
                let player = try await push.token(StandIn.deviceToken)
                #expect(push.playerId == player && push.subscriptionId == player)
                // No flag asked for it: the hash goes whenever the key is at hand, and the app with verification
                // on accepts the user.
                try await push.register("user-1001")
                #expect(push.userId == "user-1001")

                if let recorded = try await peer.requests() {
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
                // The user is the device's: a notification to the user reaches it.
                #expect(try await push.send(chatId: "c1", userIds: ["user-1001"], text: "hi").recipients == 1)
            }
        }
    }

    @Test(arguments: PushServer.allCases)
    func aUserRegisteredBeforeTheTokenGoesWithTheDevice(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.legacyKey, ["--v1"]) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.legacyKey) { push in
                try await push.register("early-user")
                if let recorded = try await peer.requests() { #expect(recorded.isEmpty) }
                try await push.token(StandIn.deviceToken)
                if let add = try await peer.requests()?.first {
                    #expect(add["body"]?["external_user_id"] == "early-user")
                    #expect(add["body"]?["external_user_id_auth_hash"]?.stringValue?.count == 64)
                }
                // v1 still answers recipients, and GQLPush passes it on.
                #expect(try await push.send(chatId: "c1", userIds: ["early-user"], text: "hi").recipients == 1)
            }
        }
    }

    @Test(arguments: PushServer.allCases)
    func sendSurfacesOneSignalsErrorsIn200Answers(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.legacyKey, ["--v1"]) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.legacyKey) { push in
                try await push.token(StandIn.deviceToken)
                try await push.register("u1")
                let sent = try await push.send(chatId: "chat-7", userIds: ["u1", "ghost"], text: "Hello ✓")
                #expect(sent.recipients == 1)
                #expect(sent.invalidUserIds == ["ghost"])
                #expect(!sent.id.isEmpty)
                let notification = try #require(try await peer.lastNotification())
                #expect(notification["include_external_user_ids"] == ["u1", "ghost"])
                #expect(notification["channel"] == "push")
                #expect(notification["contents"] == ["en": "Hello ✓"])
                #expect(notification["data"] == ["chatId": "chat-7"])
                if let request = try await peer.requests()?.last {
                    #expect(request["path"] == "/api/v1/notifications")
                    #expect(request["headers"]?["authorization"] == .string("Basic \(StandIn.legacyKey)"))
                    #expect(request["body"]?["channel_for_external_user_ids"] == "push")
                }

                let nobody = await #expect(throws: GQLError.self) {
                    try await push.send(chatId: "chat-7", userIds: ["ghost"], text: "x")
                }
                #expect(nobody?.serviceCode == "no_recipients")
                #expect(nobody?.message.contains("not subscribed") == true)

                try await push.unregister()
                if let edit = try await peer.requests()?.last { #expect(edit["body"]?["external_user_id"] == "") }
                #expect(push.playerId != nil)  // the device stays registered
                await #expect(throws: GQLError.self) { try await push.send(chatId: "c", userIds: ["u1"], text: "x") }
            }
        }
    }

    @Test(arguments: PushServer.allCases)
    func badInputAWrongKeyAndTheUsersAPIAreRefused(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.legacyKey, ["--v1"]) { peer in
            try await StandIn.withPush(peer.url, key: "wrong-key-value") { push in
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
                if let reached = try await peer.requests()?.count {
                    #expect(reached == 1)  // only the refused notification reached the peer
                }
            }
        }
    }

    @Test(arguments: PushServer.allCases) func theStaticFormUsesTheSharedInstance(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.legacyKey, ["--v1"]) { peer in
            GQLPush.setup(StandIn.appId, StandIn.legacyKey, baseURL: peer.url)
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
            if let recorded = try await peer.requests() {
                #expect(recorded.map { $0["method"] } == ["POST", "PUT", "POST", "POST"])
            }
            try await GQLPush.shared?.shutdown()
        }
    }
}
