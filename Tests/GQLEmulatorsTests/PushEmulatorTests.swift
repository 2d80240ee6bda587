import Foundation
import GQLCore
import GQLCrypto
import GQLServices
import GQLTestSupport
import Testing

@testable import GQLEmulators

/// The OneSignal emulator under GQLPush (the toolkit's own OneSignal client, unchanged) with an App API key and
/// with a legacy key, identity verification, and the inbox of notifications an app's tests read.
@Suite("OneSignal emulator", .timeLimit(.minutes(1)))
struct PushEmulatorTests {
    static let deviceToken = Data([0xA1, 0xB2, 0x00, 0xFF, 0x10])

    /// Runs `body` with a started emulator and a REST client of it.
    static func with(
        _ change: (inout GQLPushEmulator.Configuration) -> Void = { _ in },
        _ body: (GQLPushEmulator, GQLStartedEmulator, GQLREST) async throws -> Void
    ) async throws {
        var configuration = GQLPushEmulator.Configuration()
        configuration.port = 0
        change(&configuration)
        let emulator = try GQLPushEmulator(configuration: configuration)
        let started = try await emulator.start()
        let rest = GQLREST(baseURL: started.url)
        do {
            try await body(emulator, started, rest)
        } catch {
            try? await rest.shutdown()
            await started.shutdown()
            throw error
        }
        try await rest.shutdown()
        await started.shutdown()
    }

    static func push(_ emulator: GQLPushEmulator, _ url: String, kind: GQLPush.KeyKind = .app) -> GQLPush {
        GQLPush(
            appId: emulator.configuration.appId, restKey: emulator.configuration.restKey, keyKind: kind, baseURL: url)
    }

    @Test func anAppKeyRegistersMovesSendsAndUnregisters() async throws {
        try await Self.with { emulator, started, rest in
            let push = Self.push(emulator, started.url)
            let subscription = try await push.token(Self.deviceToken)
            try await push.register("user-1")
            #expect(push.subscriptionId == subscription)  // the same (type, token) moved to the user
            let user = try await rest.invoke(.get, "apps/\(emulator.configuration.appId)/users/by/external_id/user-1")
            #expect(user["subscriptions"]?[0]?["token"] == "a1b200ff10")

            let sent = try await push.send(chatId: "c42", userIds: ["user-1", "ghost"], text: "Hello")
            #expect(!sent.id.isEmpty)
            #expect(sent.invalidUserIds == ["ghost"])
            let inbox = try emulator.notifications(externalId: "user-1")
            #expect(inbox.count == 1)
            #expect(inbox.first?["contents"]?["en"] == "Hello")
            #expect(inbox.first?["data"]?["chatId"] == "c42")
            #expect(inbox.first?["recipients"]?[0]?["token"] == "a1b200ff10")
            let overHTTP = try await rest.invoke(.get, "_emulator/notifications", query: ["external_id": "user-1"])
            #expect(overHTTP["notifications"]?[0]?["id"]?.stringValue == sent.id)

            try await push.unregister()
            let nobody = await refusal { _ = try await push.send(chatId: "c42", userIds: ["user-1"], text: "Again") }
            #expect(nobody == "no_recipients")
            #expect(try emulator.notifications().count == 1)
            try await push.shutdown()
        }
    }

    @Test func usersSubscriptionsAndChannels() async throws {
        try await Self.with { emulator, started, _ in
            let push = Self.push(emulator, started.url)
            let user = try await push.createUser(
                externalId: "user-7", subscriptions: [.init(kind: .email, token: "ann@example.com")])
            #expect(user.externalId == "user-7")
            #expect(user.subscriptions.first?.kind == .email)
            let sms = try await push.addSubscription(.init(kind: .sms, token: "+15551234567"), toUser: "user-7")
            let email = try #require(user.subscriptions.first?.id)
            _ = try await push.send("Body", to: .users(["user-7"]), channel: .email, title: "Subject")
            try await push.updateSubscription(id: email, enabled: false)
            let off = await refusal {
                _ = try await push.send("Body", to: .users(["user-7"]), channel: .email, title: "S")
            }
            #expect(off == "no_recipients")
            _ = try await push.send("Text", to: .users(["user-7"]), channel: .sms)
            try await push.deleteSubscription(id: try #require(sms.id))
            let gone = await refusal { _ = try await push.deleteSubscription(id: try #require(sms.id)) }
            #expect(gone == "404")
            let sent = try emulator.notifications()
            #expect(sent.map { $0["channel"]?.stringValue } == ["email", "sms"])
            #expect(sent.first?["email_subject"] == "Subject")
            try await push.shutdown()
        }
    }

    @Test func identityVerificationNeedsATokenForTheUser() async throws {
        let key = try P256PrivateKey.generate()
        let pem = try key.pem()
        try await Self.with({ $0.identityVerificationKey = try? key.publicKeyPEM() }) { emulator, started, rest in
            let appId = emulator.configuration.appId
            let push = Self.push(emulator, started.url)
            _ = try await push.token(Self.deviceToken)
            let good = try GQLPush.identityToken(appId: appId, externalId: "user-9", privateKeyPEM: pem)
            try await push.register("user-9", identityToken: good)
            #expect(push.userId == "user-9")
            let other = try GQLPush.identityToken(appId: appId, externalId: "someone", privateKeyPEM: pem)
            let refused = await refusal { try await push.register("user-10", identityToken: other) }
            #expect(refused == "401")
            // Without any Authorization, logging a user in is refused; a device alone is not.
            let anonymous = await refusal {
                _ = try await rest.invoke(
                    .post, "apps/\(appId)/users", json: ["identity": ["external_id": "user-11"]])
            }
            #expect(anonymous == "401")
            _ = try await rest.invoke(
                .post, "apps/\(appId)/users", json: ["subscriptions": [["type": "AndroidPush", "token": "t1"]]])
            let forged = try GQLPush.identityToken(
                appId: appId, externalId: "user-9", privateKeyPEM: try P256PrivateKey.generate().pem())
            let badSignature = await refusal { try await push.register("user-9", identityToken: forged) }
            #expect(badSignature == "401")
            try await push.shutdown()
        }
    }

    @Test func aLegacyKeySpeaksV1WithTheIdentityHash() async throws {
        try await Self.with({ $0.legacyIdentityVerification = true }) { emulator, started, rest in
            let push = Self.push(emulator, started.url, kind: .legacy)
            let player = try await push.token(Self.deviceToken)
            try await push.register("user-3")
            #expect(push.playerId == player)
            let sent = try await push.send(chatId: "c1", userIds: ["user-3", "user-4"], text: "Hi")
            #expect(sent.recipients == 1)
            #expect(sent.invalidUserIds == ["user-4"])
            #expect(try emulator.notifications(externalId: "user-3").first?["api"] == "v1")
            // A wrong hash is refused.
            let wrong = await refusal {
                _ = try await rest.invoke(
                    .put, "api/v1/players/\(player)",
                    json: [
                        "app_id": .string(emulator.configuration.appId), "external_user_id": "user-5",
                        "external_user_id_auth_hash": "00",
                    ])
            }
            #expect(wrong == "400")
            try await push.unregister()
            let nobody = await refusal { _ = try await push.send(chatId: "c1", userIds: ["user-3"], text: "Hi") }
            #expect(nobody == "no_recipients")
            try await push.shutdown()
        }
    }

    @Test func hostileRequestsGetOneSignalsErrors() async throws {
        try await Self.with { emulator, started, rest in
            let appId = emulator.configuration.appId
            let wrongKey = await refusal {
                _ = try await rest.invoke(
                    .post, "notifications",
                    json: ["app_id": .string(appId), "contents": ["en": "x"], "included_segments": ["All"]],
                    headers: ["Authorization": "Key wrong"])
            }
            #expect(wrongKey == "403")
            let wrongApp = await refusal { _ = try await rest.invoke(.post, "apps/other/users", json: [:]) }
            #expect(wrongApp == "404")
            let many = GQLValue.array((0...2000).map { .string("u\($0)") })
            let tooMany = await refusal {
                _ = try await rest.invoke(
                    .post, "notifications",
                    json: [
                        "app_id": .string(appId), "contents": ["en": "x"], "target_channel": "push",
                        "include_aliases": ["external_id": many],
                    ], headers: ["Authorization": "Key \(emulator.configuration.restKey)"])
            }
            #expect(tooMany == "400")
            let reply = await PushEmulatorHostileTests.post(
                "{\"identity\": ", to: "/apps/\(appId)/users", port: started.port)
            #expect(reply.first?.status == 400)
            #expect(reply.first?.body.contains("\"errors\"") == true)
            let kept = try emulator.notifications()
            #expect(kept.isEmpty)
        }
    }
}

/// The service code, else the HTTP status, of a call that must fail; nil when it did not fail.
func refusal(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch let error as GQLError {
        return error.serviceCode ?? error.httpStatus.map { String($0) } ?? "\(error.code)"
    } catch {
        return "\(error)"
    }
}
