import Foundation
import GQLCore

extension GQLPush {
    /// What OneSignal did with a notification: its id, how many devices it reached, and the user ids it could
    /// not reach.
    ///
    /// ```swift
    /// let sent = try await push.send(chatId: "c42", userIds: ["u1", "u2"], text: "Hello")
    /// if !sent.invalidUserIds.isEmpty { print("no device for", sent.invalidUserIds) }
    /// ```
    public struct Notification: Sendable, Hashable {
        /// OneSignal's id of the notification.
        public var id: String
        /// How many devices it was sent to.
        public var recipients: Int
        /// The user ids with no subscribed device (OneSignal's `invalid_external_user_ids`).
        public var invalidUserIds: [String]
        /// Any other messages of OneSignal's `errors`.
        public var warnings: [String]
    }

    /// Sends `text` to the devices of `userIds` (`POST /api/v1/notifications`: `include_external_user_ids`,
    /// `contents.en`, `data.chatId`), authorized by the REST API key.
    ///
    /// OneSignal answers HTTP 200 also when it could not reach some or all users, with `errors` in the body: those
    /// reached nobody throw, the user ids without a device come back in ``Notification/invalidUserIds``.
    ///
    /// ```swift
    /// try await push.send(chatId: chat.id, userIds: chat.members.filter { $0 != me }, text: message.text)
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for no user ids, more than 2,000 (OneSignal's limit per
    ///   call) or an empty one; `.http` for a refused request (a wrong REST API key: 403) and for a notification
    ///   that reached nobody (OneSignal's errors in the message, ``GQLCore/GQLError/serviceCode``
    ///   `no_recipients`); `.invalidResponse` and the transport errors.
    @discardableResult
    public func send(chatId: String, userIds: [String], text: String) async throws -> Notification {
        guard !userIds.isEmpty, userIds.count <= 2000, !userIds.contains(where: \.isEmpty) else {
            throw GQLError(
                .invalidArgument,
                userIds.isEmpty
                    ? "no user ids to send to"
                    : userIds.count > 2000
                        ? "\(userIds.count) user ids: OneSignal takes at most 2,000 per notification"
                        : "a user id is empty",
                operation: "send")
        }
        let body: GQLValue = [
            "app_id": .string(appId),
            "include_external_user_ids": .array(userIds.map { .string($0) }),
            "channel_for_external_user_ids": "push",
            "contents": ["en": .string(text)],
            "data": ["chatId": .string(chatId)],
        ]
        let answer = try await rest.invoke(
            .post, "api/v1/notifications", json: body, headers: ["Authorization": "Basic \(restKey)"])
        let id = answer["id"]?.stringValue ?? ""
        let invalid = answer["errors"]?["invalid_external_user_ids"]?.arrayValue?.compactMap(\.stringValue) ?? []
        var warnings = Self.messages(answer["errors"])
        if !invalid.isEmpty { warnings.removeAll { $0.hasPrefix("invalid_external_user_ids") } }
        guard !id.isEmpty else {
            let reasons = Self.messages(answer["errors"])
            throw GQLError(
                .http,
                "OneSignal sent the notification to nobody: "
                    + (reasons.isEmpty ? "it gave no notification id" : reasons.joined(separator: "; ")),
                operation: "send", httpStatus: 200, serviceCode: "no_recipients")
        }
        return Notification(
            id: id, recipients: Int(answer["recipients"]?.intValue ?? 0), invalidUserIds: invalid, warnings: warnings)
    }
}
