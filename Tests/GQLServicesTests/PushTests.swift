import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLPush against a OneSignal-shaped REST API v1 on Python's http.server (Tests/Interop/onesignal_peer.py), which
/// checks the request shapes, the REST API key and identity-verification hashes, and records every request.
@Suite(.serialized) struct PushTests {
    static let appId = "5eb5a37e-b458-11e3-ac11-000c2940e62c"
    static let restKey = "NGEwMGZmMjItY2NkNy0xMWUzLTk5ZDUtMDAwYzI5NDBlNjJj"
    static let deviceToken = Data([0xA1, 0xB2, 0x00, 0xFF, 0x10])

    private static func withPeer(
        identityVerification: Bool = false,
        _ body: (_ baseURL: String, _ requests: () async throws -> [GQLValue]) async throws -> Void
    ) async throws {
        let arguments = [appId, restKey] + (identityVerification ? ["--identity-verification"] : [])
        try await PythonPeer.with("onesignal_peer.py", arguments) { peer in
            let inspector = GQLREST(baseURL: peer.ready)
            do {
                try await body(peer.ready) { try await inspector.invoke(.get, "_requests").arrayValue ?? [] }
                try await inspector.shutdown()
            } catch {
                try? await inspector.shutdown()
                throw error
            }
        }
    }

    private static func withPush(
        _ baseURL: String, identityVerification: Bool = false, key: String = restKey,
        _ body: (GQLPush) async throws -> Void
    ) async throws {
        let push = GQLPush(appId: appId, restKey: key, baseURL: baseURL, identityVerification: identityVerification)
        do {
            try await body(push)
            try await push.shutdown()
        } catch {
            try? await push.shutdown()
            throw error
        }
    }

    @Test func registersTheDeviceThenTheUserWithItsIdentityHash() async throws {
        try await Self.withPeer(identityVerification: true) { url, requests in
            try await Self.withPush(url, identityVerification: true) { push in
                #expect(GQLPush.hex(Self.deviceToken) == "a1b200ff10")
                let player = try await push.token(Self.deviceToken)
                #expect(push.playerId == player)
                try await push.register("user-1001")
                #expect(push.userId == "user-1001")

                let recorded = try await requests()
                #expect(recorded.count == 2)
                let add = recorded[0]
                #expect(add["method"] == "POST" && add["path"] == "/api/v1/players")
                #expect(add["body"]?["app_id"] == .string(Self.appId))
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

    @Test func aMissingIdentityHashIsRefusedWithOneSignalsError() async throws {
        try await Self.withPeer(identityVerification: true) { url, _ in
            try await Self.withPush(url, identityVerification: false) { push in
                try await push.token(Self.deviceToken)
                let error = await #expect(throws: GQLError.self) { try await push.register("user-1") }
                #expect(error?.code == .http)
                #expect(error?.httpStatus == 400)
                #expect(error?.message.contains("auth hash") == true, "\(error?.message ?? "")")
                #expect(push.userId == nil)
            }
        }
    }

    @Test func aUserRegisteredBeforeTheTokenGoesWithTheDevice() async throws {
        try await Self.withPeer { url, requests in
            try await Self.withPush(url) { push in
                try await push.register("early-user")
                #expect(try await requests().isEmpty)
                try await push.token(Self.deviceToken)
                let add = try #require(try await requests().first)
                #expect(add["body"]?["external_user_id"] == "early-user")
                #expect(add["body"]?["external_user_id_auth_hash"] == nil)
                #expect(try await push.send(chatId: "c1", userIds: ["early-user"], text: "hi").recipients == 1)
            }
        }
    }

    @Test func sendSurfacesOneSignalsErrorsIn200Answers() async throws {
        try await Self.withPeer { url, requests in
            try await Self.withPush(url) { push in
                try await push.token(Self.deviceToken)
                try await push.register("u1")
                let sent = try await push.send(chatId: "chat-7", userIds: ["u1", "ghost"], text: "Hello ✓")
                #expect(sent.recipients == 1)
                #expect(sent.invalidUserIds == ["ghost"])
                #expect(!sent.id.isEmpty)
                let notification = try #require(try await requests().last)
                #expect(notification["path"] == "/api/v1/notifications")
                #expect(notification["headers"]?["authorization"] == .string("Basic \(Self.restKey)"))
                #expect(notification["body"]?["include_external_user_ids"] == ["u1", "ghost"])
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
                await #expect(throws: GQLError.self) { try await push.send(chatId: "c", userIds: ["u1"], text: "x") }
            }
        }
    }

    @Test func badInputAndAWrongKeyAreRefused() async throws {
        try await Self.withPeer { url, _ in
            try await Self.withPush(url, key: "wrong-key-value") { push in
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
            }
        }
    }

    @Test func theStaticFormUsesTheSharedInstance() async throws {
        try await Self.withPeer { url, requests in
            GQLPush.setup(Self.appId, Self.restKey, baseURL: url)
            #expect(GQLPush.token(Self.deviceToken) == "a1b200ff10")
            try await GQLPush.register("static-user")  // waits for the registration started above
            let sent = try await GQLPush.send(chatId: "c", userIds: ["static-user"], text: "hi")
            #expect(sent.recipients == 1)
            let done = GQLLocked<(String?, Bool)?>(nil)
            await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
                GQLPush.token(Self.deviceToken) { player, error in
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
