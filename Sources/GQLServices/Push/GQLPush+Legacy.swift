import Foundation
import GQLCore
import GQLCrypto

/// OneSignal's v1 API (`/api/v1/players`), which GQLPush speaks with a legacy REST API key: the apps that still run on
/// it keep working. OneSignal documents it as legacy (<https://documentation.onesignal.com/reference/add-a-device>:
/// "This is a Legacy API. Use Create User or Create Subscription instead").
extension GQLPush {
    /// `POST /api/v1/players`: this device by its push token (and the user id, with its hash); the player id.
    func addPlayer(identifier: String, userId: String?) async throws -> String {
        var body: GQLValues = [
            "app_id": .string(appId), "device_type": .int(Int64(deviceType.rawValue)),
            "identifier": .string(identifier),
            "language": .string(Locale.current.language.languageCode?.identifier ?? "en"),
            "timezone": .int(Int64(TimeZone.current.secondsFromGMT())),
        ]
        if sandbox { body["test_type"] = 1 }
        if let userId { body.merge(legacyIdentity(userId)) { $1 } }
        let answer = try await rest.invoke(.post, "api/v1/players", json: .object(body))
        try Self.checkErrors(answer, operation: "token")
        guard let id = answer["id"]?.stringValue, !id.isEmpty else {
            throw GQLError(
                .invalidResponse, "OneSignal registered the device without giving its id", operation: "token")
        }
        return id
    }

    /// `PUT /api/v1/players/{id}`: the player's `external_user_id` (`""` removes it).
    func editPlayer(_ player: String, externalUserId: String, operation: String) async throws {
        var body: GQLValues = ["app_id": .string(appId)]
        body.merge(legacyIdentity(externalUserId)) { $1 }
        let answer = try await rest.invoke(
            .put, "api/v1/players/\(GQLREST.percentEncoded(player))", json: .object(body))
        try Self.checkErrors(answer, operation: operation)
        guard answer["success"]?.boolValue != false else {
            throw GQLError(.invalidResponse, "OneSignal answered success: false", operation: operation)
        }
    }

    /// `external_user_id` with `external_user_id_auth_hash` = hex(HMAC-SHA256(REST API key, user id)), always for a
    /// non-empty id: v1's identity verification needs it when the app has it on and ignores it otherwise, so
    /// sending it whenever the key is at hand spares an app with verification on a refusal it must find a flag for.
    func legacyIdentity(_ userId: String) -> GQLValues {
        var fields: GQLValues = ["external_user_id": .string(userId)]
        if !userId.isEmpty {
            fields["external_user_id_auth_hash"] = .string(
                Bytes.hex(HMACSHA256.authenticate(Data(userId.utf8), key: Data(restKey.utf8))))
        }
        return fields
    }
}
