import Foundation
import GQLCore
import GQLCrypto

/// v1's players (`POST /api/v1/players`, `PUT /api/v1/players/{id}`), kept as subscriptions: a player's
/// `external_user_id` is the `external_id` alias of the user that owns it. OneSignal's device SDKs call them with no
/// key; with ``GQLPushEmulator/Configuration/legacyIdentityVerification`` an `external_user_id` needs
/// `external_user_id_auth_hash`, hex HMAC-SHA256 of it under the REST API key.
extension PushApp {
    /// v1 `device_type` numbers and today's subscription types.
    static let deviceTypes: [Int64: String] = [
        0: "iOSPush", 1: "AndroidPush", 2: "FireOSPush", 3: "WindowsPush", 5: "ChromePush", 7: "SafariLegacyPush",
        8: "FirefoxPush", 9: "macOSPush", 11: "Email", 13: "HuaweiPush", 14: "SMS",
    ]

    /// `POST /api/v1/players`: the player with this identifier (made when new); `{"success": true, "id"}`.
    func addPlayer(_ body: GQLValues) throws -> GQLValue {
        try checkLegacyApp(body)
        guard let deviceType = body["device_type"]?.intValue else {
            throw OneSignalError("device_type is required and must be an integer")
        }
        guard let type = Self.deviceTypes[deviceType] else {
            throw OneSignalError("device_type \(deviceType) is not one the emulator knows")
        }
        if let identifier = body["identifier"], !identifier.isNull, identifier.stringValue == nil {
            throw OneSignalError("identifier must be a string")
        }
        let external = try legacyExternalId(body)
        let testType = body["test_type"]?.intValue
        let identifier = body["identifier"]?.stringValue
        let id = try change { directory -> String in
            let existing = directory.subscription(type: type, token: identifier)
            let owner: String
            if let external, !external.isEmpty {
                owner = directory.user("external_id", external) ?? directory.newUser(["external_id": external])
            } else if external == nil, let existing, let current = directory.subscriptions[existing]?.owner {
                owner = current
            } else {
                owner = directory.newUser()
            }
            var subscription = PushDirectory.Subscription(
                type: type, token: identifier, enabled: true, testType: testType, owner: owner)
            if let existing {
                subscription.testType = testType ?? directory.subscriptions[existing]?.testType
                directory.subscriptions[existing] = subscription
                directory.dropEmptyUsers()
                return existing
            }
            let (_, id) = directory.place(subscription)
            directory.dropEmptyUsers()
            return id
        }
        return ["success": true, "id": .string(id)]
    }

    /// `PUT /api/v1/players/{id}`: a new `external_user_id` (`""` takes the user away); `{"success": true}`.
    func editPlayer(_ id: String, body: GQLValues) throws -> GQLValue {
        try checkLegacyApp(body)
        let external = try legacyExternalId(body)
        try change { directory in
            guard directory.subscriptions[id] != nil else {
                throw OneSignalError("No user with this id found: \(id)")
            }
            if let external {
                let owner =
                    external.isEmpty
                    ? directory.newUser()
                    : directory.user("external_id", external) ?? directory.newUser(["external_id": external])
                directory.subscriptions[id]?.owner = owner
                directory.dropEmptyUsers()
            }
        }
        return ["success": true]
    }

    private func checkLegacyApp(_ body: GQLValues) throws {
        guard body["app_id"]?.stringValue == configuration.appId else {
            throw OneSignalError("app_id not found. You may be missing a Content-Type: application/json header.")
        }
    }

    /// The `external_user_id` of a v1 request, its hash checked when identity verification is on.
    private func legacyExternalId(_ body: GQLValues) throws -> String? {
        guard let value = body["external_user_id"], !value.isNull else { return nil }
        guard let external = value.stringValue else { throw OneSignalError("external_user_id must be a string") }
        if configuration.legacyIdentityVerification, !external.isEmpty {
            let expected = Bytes.hex(
                HMACSHA256.authenticate(Data(external.utf8), key: Data(configuration.restKey.utf8)))
            guard let given = body["external_user_id_auth_hash"]?.stringValue,
                GQLEmulatorCredentials.same(given.lowercased(), expected)
            else {
                throw OneSignalError(
                    "External user id auth hash is invalid or missing (identity verification is required)")
            }
        }
        return external
    }
}
