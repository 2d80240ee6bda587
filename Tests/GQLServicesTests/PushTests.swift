import Foundation
import GQLCore
import GQLCrypto
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLPush with an App API key against OneSignal's API of today, at both servers (``PushServer``: the stand-in of
/// Tests/Interop/onesignal_peer.py and GQLEmulators' OneSignal emulator): `Authorization: Key`, the Users and
/// Subscriptions API, `include_aliases` with `target_channel`, answers without `recipients`, and identity
/// verification by ES256 JWTs (the stand-in checks them with PyJWT). The request shapes on the wire are checked
/// at the stand-in, which records them.
@Suite(.serialized) struct PushTests {
    typealias StandIn = OneSignalStandIn

    @Test func theKeysFormDecidesItsKindUnlessTold() {
        #expect(GQLPush.KeyKind.of(StandIn.appKey) == .app)
        #expect(GQLPush.KeyKind.of("os_v2_org_abc") == .app)
        #expect(GQLPush.KeyKind.of(StandIn.legacyKey) == .legacy)
        #expect(GQLPush(appId: "a", restKey: StandIn.appKey).authorization == "Key \(StandIn.appKey)")
        #expect(GQLPush(appId: "a", restKey: StandIn.legacyKey).authorization == "Basic \(StandIn.legacyKey)")
        #expect(GQLPush(appId: "a", restKey: "custom", keyKind: .app).authorization == "Key custom")
    }

    @Test(arguments: PushServer.allCases)
    func theDeviceIsASubscriptionThatMovesToItsUserAndAwayAgain(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.appKey) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.appKey) { push in
                let subscription = try await push.token(StandIn.deviceToken)
                #expect(push.subscriptionId == subscription && !subscription.isEmpty)
                try await push.register("user-1001")
                #expect(push.userId == "user-1001")
                #expect(push.subscriptionId == subscription)  // moved, not made anew
                // The next launch gives the token again: the device stays with its user.
                #expect(try await push.token(StandIn.deviceToken) == subscription)

                if let recorded = try await peer.requests() {
                    #expect(recorded.count == 3)
                    let add = recorded[0]
                    #expect(add["method"] == "POST" && add["path"] == .string("/apps/\(StandIn.appId)/users"))
                    #expect(add["headers"]?["authorization"] == .string("Key \(StandIn.appKey)"))
                    #expect(add["body"]?["subscriptions"]?[0]?["type"] == "iOSPush")
                    #expect(add["body"]?["subscriptions"]?[0]?["token"] == "a1b200ff10")
                    #expect(add["body"]?["identity"] == nil)
                    #expect(recorded[1]["body"]?["identity"] == ["external_id": "user-1001"])
                }

                // Today's answer has no recipients: the notification is returned, not refused.
                let sent = try await push.send(chatId: "c42", userIds: ["user-1001", "ghost"], text: "Hello ✓")
                #expect(!sent.id.isEmpty)
                #expect(sent.recipients == nil)
                #expect(sent.invalidUserIds == ["ghost"])
                #expect(sent.warnings.isEmpty)
                let notification = try #require(try await peer.lastNotification())
                #expect(notification["include_aliases"] == ["external_id": ["user-1001", "ghost"]])
                #expect(notification["channel"] == "push")
                #expect(notification["contents"] == ["en": "Hello ✓"])
                #expect(notification["data"] == ["chatId": "c42"])
                if let request = try await peer.requests()?.last {
                    #expect(request["path"] == "/notifications" && request["query"] == "c=push")
                    #expect(request["headers"]?["authorization"] == .string("Key \(StandIn.appKey)"))
                    #expect(request["body"]?["target_channel"] == "push")
                }

                try await push.unregister()
                if let recorded = try await peer.requests() {
                    #expect(recorded.suffix(2).map { $0["method"] } == ["DELETE", "POST"])
                    #expect(recorded.last?["body"]?["identity"] == nil)  // a new anonymous user holds the device
                }
                #expect(push.userId == nil)
                #expect(push.subscriptionId != nil && push.subscriptionId != subscription)
                let nobody = await #expect(throws: GQLError.self) {
                    try await push.send(chatId: "c42", userIds: ["user-1001"], text: "x")
                }
                #expect(nobody?.serviceCode == "no_recipients" && nobody?.httpStatus == 200)
            }
        }
    }

    @Test(arguments: PushServer.allCases)
    func usersAndSubscriptionsManagedFromAServer(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.appKey) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.appKey) { push in
                let email = GQLPush.Subscription(kind: .email, token: "ann@example.com")
                let user = try await push.createUser(
                    externalId: "ann", aliases: ["crm_id": "c-17"], subscriptions: [email])
                #expect(user.externalId == "ann" && user.aliases["crm_id"] == "c-17" && user.onesignalId != nil)
                let emailId = try #require(user.subscriptions.first?.id)
                let sms = try await push.addSubscription(.init(kind: .sms, token: "+15550100"), toUser: "ann")
                let smsId = try #require(sms.id)
                if let recorded = try await peer.requests() {
                    #expect(recorded.last?["headers"]?["authorization"] == .string("Key \(StandIn.appKey)"))
                }

                let text = try await push.send("Code 1234", to: .users(["ann"]), channel: .sms)
                #expect(text.invalidUserIds.isEmpty)
                try await push.updateSubscription(id: smsId, enabled: false)
                let off = await #expect(throws: GQLError.self) {
                    try await push.send("Code 5678", to: .users(["ann"]), channel: .sms)
                }
                #expect(off?.serviceCode == "no_recipients")

                let mail = try await push.send("Body", to: .users(["ann"]), channel: .email, title: "Subject")
                #expect(!mail.id.isEmpty)
                let sent = try #require(try await peer.lastNotification())
                #expect(sent["channel"] == "email" && sent["include_aliases"] == ["external_id": ["ann"]])
                #expect(sent["email_subject"] == "Subject" && sent["email_body"] == "Body")
                if let request = try await peer.requests()?.last {
                    #expect(request["query"] == "c=email" && request["body"]?["target_channel"] == "email")
                }
                try await push.deleteSubscription(id: emailId)
                await #expect(throws: GQLError.self) {
                    try await push.send("Body", to: .users(["ann"]), channel: .email, title: "Subject")
                }

                let unknown = await #expect(throws: GQLError.self) {
                    try await push.addSubscription(email, toUser: "nobody")
                }
                #expect(unknown?.httpStatus == 404)
                let gone = await #expect(throws: GQLError.self) { try await push.deleteSubscription(id: emailId) }
                #expect(gone?.httpStatus == 404)
                let noTitle = await #expect(throws: GQLError.self) {
                    try await push.send("Body", to: .users(["ann"]), channel: .email)
                }
                #expect(noTitle?.code == .invalidArgument)
            }
        }
    }

    @Test(arguments: PushServer.allCases) func segmentsAndFiltersTargetTheirOwnWay(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.appKey) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.appKey) { push in
                try await push.token(StandIn.deviceToken)
                try await push.send("New version", to: .segments(["Active Users"], excluding: ["Beta"]), title: "v2")
                var sent = try #require(try await peer.lastNotification())
                #expect(sent["included_segments"] == ["Active Users"] && sent["excluded_segments"] == ["Beta"])
                #expect(sent["headings"] == ["en": "v2"] && sent["include_aliases"] == nil)
                let filter: GQLValue = ["field": "tag", "key": "level", "relation": ">", "value": "10"]
                try await push.send("Level up", to: .filters([filter, ["operator": "OR"], filter]))
                sent = try #require(try await peer.lastNotification())
                #expect(sent["filters"]?.arrayValue?.count == 3 && sent["channel"] == "push")
                for audience: GQLPush.Audience in [.segments([]), .filters([]), .filters(["not an object"])] {
                    let error = await #expect(throws: GQLError.self) { try await push.send("x", to: audience) }
                    #expect(error?.code == .invalidArgument)
                }
            }
        }
    }

    @Test(arguments: PushServer.allCases)
    func aKeyInTheWrongSchemeOrAWrongKeyIsRefused(_ server: PushServer) async throws {
        try await StandIn.withPeer(server, key: StandIn.appKey) { peer in
            try await StandIn.withPush(peer.url, key: "os_v2_app_wrong") { push in
                let error = await #expect(throws: GQLError.self) { try await push.send("x", to: .segments(["All"])) }
                #expect(error?.httpStatus == 403, "\(error.map { "\($0)" } ?? "")")
                #expect(error.map { "\($0)".contains("os_v2_app_wrong") } == false)
            }
            // The scheme: today's key in v1's Basic is refused; the page's lowercase `key` is the same scheme.
            let rest = GQLREST(baseURL: peer.url)
            let body: GQLValue = [
                "app_id": .string(StandIn.appId), "included_segments": ["All"], "contents": ["en": "x"],
            ]
            let basic = await #expect(throws: GQLError.self) {
                try await rest.invoke(
                    .post, "notifications?c=push", json: body, headers: ["Authorization": "Basic \(StandIn.appKey)"])
            }
            #expect(basic?.httpStatus == 403)
            let lower = try await rest.invoke(
                .post, "notifications?c=push", json: body, headers: ["Authorization": "key \(StandIn.appKey)"])
            #expect(lower["id"] == "")  // accepted; nobody is subscribed yet
            try await rest.shutdown()
        }
    }

    @Test(arguments: PushServer.allCases)
    func identityVerificationWithATokenTheServerMinted(_ server: PushServer) async throws {
        let key = try P256PrivateKey.generate()
        let publicKey = FileManager.default.temporaryDirectory.appendingPathComponent("os-iv-\(UUID().uuidString).pem")
        try Data(try key.publicKeyPEM().utf8).write(to: publicKey)
        defer { try? FileManager.default.removeItem(at: publicKey) }
        let pem = try key.pem()
        let minted = try GQLPush.identityToken(appId: StandIn.appId, externalId: "u-1", privateKeyPEM: pem)
        let parts = minted.split(separator: ".")
        #expect(parts.count == 3 && Base64URL.decode(parts[2])?.count == 64)
        let claims = try GQLValue(json: Data(try #require(Base64URL.decode(parts[1]))))
        #expect(claims["iss"] == .string(StandIn.appId) && claims["identity"] == ["external_id": "u-1"])
        #expect(try GQLValue(json: Data(try #require(Base64URL.decode(parts[0]))))["alg"] == "ES256")

        let flag = "--identity-verification=\(publicKey.path)"
        try await StandIn.withPeer(server, key: StandIn.appKey, [flag]) { peer in
            try await StandIn.withPush(peer.url, key: StandIn.appKey) { push in
                try await push.token(StandIn.deviceToken)
                try await push.register("u-1", identityToken: minted)  // the server verified it (PyJWT at the stand-in)
                if let recorded = try await peer.requests() {
                    #expect(recorded.last?["headers"]?["authorization"] == .string("Bearer \(minted)"))
                }

                let other = try GQLPush.identityToken(appId: StandIn.appId, externalId: "u-2", privateKeyPEM: pem)
                let expired = try GQLPush.identityToken(
                    appId: StandIn.appId, externalId: "u-1", privateKeyPEM: pem,
                    now: Date(timeIntervalSinceNow: -7200))
                let stranger = try GQLPush.identityToken(
                    appId: StandIn.appId, externalId: "u-1", privateKeyPEM: try P256PrivateKey.generate().pem())
                for (user, token) in [("u-1", other), ("u-1", expired), ("u-1", stranger)] {
                    let refused = await #expect(throws: GQLError.self) {
                        try await push.register(user, identityToken: token)
                    }
                    #expect(refused?.httpStatus == 401, "\(refused.map { "\($0)" } ?? "")")
                }
                #expect(push.userId == "u-1")
            }
        }
        #expect(throws: GQLError.self) {
            try GQLPush.identityToken(appId: StandIn.appId, externalId: "u", privateKeyPEM: "not a key")
        }
        #expect(throws: GQLError.self) {
            try GQLPush.identityToken(
                appId: StandIn.appId, externalId: "u", privateKeyPEM: try RSAPrivateKey.generate().pem())
        }
    }

    @Test func anIdentityTokensLifetimeAndClockAreBoundedInsteadOfOverflowing() throws {
        let pem = try P256PrivateKey.generate().pem()
        let cases: [(Duration, Date)] = [
            (.seconds(Int64.max), Date()), (GQLPush.maxIdentityTokenLifetime + .seconds(1), Date()),
            (.seconds(60), Date(timeIntervalSince1970: .infinity)), (.seconds(60), Date(timeIntervalSince1970: .nan)),
            (.seconds(60), Date(timeIntervalSince1970: 1e300)), (.seconds(60), Date(timeIntervalSince1970: -1)),
        ]
        for (lifetime, now) in cases {
            let error = #expect(throws: GQLError.self) {
                try GQLPush.identityToken(
                    appId: StandIn.appId, externalId: "u", privateKeyPEM: pem, lifetime: lifetime, now: now)
            }
            #expect(error?.code == .invalidArgument)
        }
        let year = try GQLPush.identityToken(
            appId: StandIn.appId, externalId: "u", privateKeyPEM: pem, lifetime: GQLPush.maxIdentityTokenLifetime,
            now: Date(timeIntervalSince1970: 1_000_000_000))
        let claims = try GQLValue(json: Data(try #require(Base64URL.decode(year.split(separator: ".")[1]))))
        #expect(claims["exp"] == .int(1_000_000_000 + 365 * 24 * 3600))
    }

    /// The stand-in only: it fails the next request on demand (`/_refuse_next`); the emulator has no such switch.
    @Test func unregisterForgetsTheDeletedSubscriptionWhenRegisteringAgainFails() async throws {
        try await StandIn.withPeer(key: StandIn.appKey) { peer in
            let url = peer.url
            let requests = { try await peer.requests() ?? [] }
            let control = GQLREST(baseURL: url)
            defer { Task { try? await control.shutdown() } }
            try await StandIn.withPush(url, key: StandIn.appKey) { push in
                let first = try await push.token(StandIn.deviceToken)
                try await push.register("user-7")
                // The delete succeeds, the new anonymous user is refused.
                try await control.invoke(.post, "_refuse_next", json: ["method": "POST", "status": 503])
                let failed = await #expect(throws: GQLError.self) { try await push.unregister() }
                #expect(failed?.httpStatus == 503)
                #expect(push.subscriptionId == nil && push.userId == nil)
                // Nothing deleted is deleted again: this unregister has nothing to take.
                let before = try await requests().count
                try await push.unregister()
                #expect(try await requests().count == before)
                // The next launch's token registers the device anew, with no user.
                let second = try await push.token(StandIn.deviceToken)
                #expect(second != first && push.subscriptionId == second && push.userId == nil)

                // A subscription deleted elsewhere (404 on the delete) counts as deleted.
                try await push.register("user-8")
                try await push.deleteSubscription(id: second)
                try await push.unregister()
                let recorded = try await requests()
                #expect(recorded.suffix(2).map { $0["method"] } == ["DELETE", "POST"])
                #expect(push.userId == nil && push.subscriptionId != nil && push.subscriptionId != second)
            }
        }
    }
}
