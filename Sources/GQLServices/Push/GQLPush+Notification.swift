import Foundation
import GQLCore

/// Notifications (<https://documentation.onesignal.com/reference/push-notification>, authorized by the REST API key).
extension GQLPush {
    /// What OneSignal did with a notification: its id, and the user ids it could not reach.
    ///
    /// ```swift
    /// let sent = try await push.send(chatId: "c42", userIds: ["u1", "u2"], text: "Hello")
    /// if !sent.invalidUserIds.isEmpty { print("no subscription for", sent.invalidUserIds) }
    /// ```
    public struct Notification: Sendable, Hashable {
        /// OneSignal's id of the notification.
        public var id: String
        /// How many subscriptions it was sent to, when the answer says (the v1 API's `recipients`); today's API
        /// does not promise it, and GQLPush never makes one up.
        public var recipients: Int?
        /// The user ids with no subscription on the channel (today's `invalid_aliases.external_id`, v1's
        /// `invalid_external_user_ids`).
        public var invalidUserIds: [String]
        /// Any other messages of OneSignal's `errors`.
        public var warnings: [String]
        /// The answer's `external_id`: the idempotency key of the request, if it had one (not a user id).
        public var externalId: String?
    }

    /// Who receives a notification.
    ///
    /// ```swift
    /// try await push.send("Dinner at eight?", to: .users(["user-1002"]))
    /// try await push.send("New version", to: .segments(["Active Users"], excluding: ["Beta"]))
    /// try await push.send("Hi", to: .filters([["field": "tag", "key": "level", "relation": ">", "value": "10"]]))
    /// ```
    public enum Audience: Sendable, Hashable {
        /// Users by their external ids, at most 2,000 a call: `include_aliases: {"external_id": […]}` with
        /// `target_channel` (v1: `include_external_user_ids` with `channel_for_external_user_ids`).
        case users([String])
        /// `included_segments`, minus `excluded_segments`.
        case segments([String], excluding: [String] = [])
        /// `filters`: OneSignal's filter objects (`field`, `relation`, `value` …) and `{"operator": "OR"}`, as given.
        case filters([GQLValue])
    }

    /// The channel a notification goes out on (`target_channel`).
    public enum Channel: String, Sendable, Hashable {
        case push, email, sms
    }

    /// Sends `text` to `audience` on `channel` (`POST /notifications` with an App API key, `POST
    /// /api/v1/notifications` with a legacy one), authorized by the REST API key.
    ///
    /// Push and SMS send `text` as `contents.en` (push: `title` as `headings.en`); email sends `title` as
    /// `email_subject` and `text` as `email_body`. `data` goes as `data` (push only).
    ///
    /// OneSignal answers HTTP 200 also when it could not reach some or all users, with `errors` in the body: an answer
    /// without a notification id throws; the user ids without a subscription come back in
    /// ``Notification/invalidUserIds``.
    ///
    /// ```swift
    /// let sent = try await push.send("Your code is 1234", to: .users([userId]), channel: .sms)
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty audience, more than 2,000 user ids or an
    ///   empty one, or an email without a title; `.http` for a refused request (a wrong REST API key: 401 or 403)
    ///   and for a notification that reached nobody (OneSignal's errors in the message,
    ///   ``GQLCore/GQLError/serviceCode`` `no_recipients`); `.invalidResponse` and the transport errors.
    @discardableResult
    public func send(
        _ text: String, to audience: Audience, channel: Channel = .push, title: String? = nil, data: GQLValues = [:]
    ) async throws -> Notification {
        var body: GQLValues = ["app_id": .string(appId)]
        body.merge(try target(audience, channel: channel)) { $1 }
        switch channel {
        case .email:
            guard let title, !title.isEmpty else {
                throw GQLError(.invalidArgument, "an email needs a title (its subject)", operation: "send")
            }
            body["email_subject"] = .string(title)
            body["email_body"] = .string(text)
        case .push, .sms:
            body["contents"] = ["en": .string(text)]
            if channel == .push, let title { body["headings"] = ["en": .string(title)] }
        }
        if channel == .push, !data.isEmpty { body["data"] = .object(data) }
        let path = keyKind == .app ? "notifications?c=\(channel.rawValue)" : "api/v1/notifications"
        let answer = try await rest.invoke(
            .post, path, json: .object(body), headers: ["Authorization": authorization])
        return try Self.notification(answer)
    }

    /// Sends `text` to the subscriptions of `userIds` on push, with `data.chatId` (the original toolkit's call).
    ///
    /// ```swift
    /// try await push.send(chatId: chat.id, userIds: chat.members.filter { $0 != me }, text: message.text)
    /// ```
    /// - Throws: as ``send(_:to:channel:title:data:)``.
    @discardableResult
    public func send(chatId: String, userIds: [String], text: String) async throws -> Notification {
        try await send(text, to: .users(userIds), data: ["chatId": .string(chatId)])
    }

    /// The targeting fields of `audience`, checked.
    private func target(_ audience: Audience, channel: Channel) throws -> GQLValues {
        switch audience {
        case .users(let userIds):
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
            let ids = GQLValue.array(userIds.map { .string($0) })
            return keyKind == .app
                ? ["include_aliases": ["external_id": ids], "target_channel": .string(channel.rawValue)]
                : ["include_external_user_ids": ids, "channel_for_external_user_ids": .string(channel.rawValue)]
        case .segments(let included, let excluded):
            guard !included.isEmpty, !included.contains(where: \.isEmpty), !excluded.contains(where: \.isEmpty) else {
                throw GQLError(.invalidArgument, "no segment to send to, or an empty segment name", operation: "send")
            }
            var fields: GQLValues = ["included_segments": .array(included.map { .string($0) })]
            if !excluded.isEmpty { fields["excluded_segments"] = .array(excluded.map { .string($0) }) }
            if keyKind == .app { fields["target_channel"] = .string(channel.rawValue) }
            return fields
        case .filters(let filters):
            guard !filters.isEmpty, filters.allSatisfy({ $0.objectValue != nil }) else {
                throw GQLError(.invalidArgument, "no filters, or a filter that is not an object", operation: "send")
            }
            var fields: GQLValues = ["filters": .array(filters)]
            if keyKind == .app { fields["target_channel"] = .string(channel.rawValue) }
            return fields
        }
    }

    /// The notification an answer describes; an answer without an id (no notification made) throws.
    static func notification(_ answer: GQLValue) throws -> Notification {
        let id = answer["id"]?.stringValue ?? ""
        let errors = answer["errors"]
        let listed = errors?["invalid_aliases"]?["external_id"] ?? errors?["invalid_external_user_ids"]
        let invalid = (listed?.arrayValue ?? []).compactMap(\.stringValue)
        var warnings = messages(errors)
        if !invalid.isEmpty {
            warnings.removeAll { $0.hasPrefix("invalid_aliases") || $0.hasPrefix("invalid_external_user_ids") }
        }
        guard !id.isEmpty else {
            throw GQLError(
                .http,
                "OneSignal sent the notification to nobody: "
                    + (warnings.isEmpty && invalid.isEmpty
                        ? "it gave no notification id"
                        : (warnings + (invalid.isEmpty ? [] : ["no subscription for \(invalid.count) user ids"]))
                            .joined(separator: "; ")),
                operation: "send", httpStatus: 200, serviceCode: "no_recipients")
        }
        return Notification(
            id: id, recipients: answer["recipients"]?.intValue.map { Int($0) }, invalidUserIds: invalid,
            warnings: warnings, externalId: answer["external_id"]?.stringValue)
    }
}
