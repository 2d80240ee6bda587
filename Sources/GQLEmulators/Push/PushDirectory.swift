import Foundation
import GQLCore

/// The OneSignal emulator's users and subscriptions, kept in its data folder as `app.json` (rewritten atomically
/// after every change). A v1 player is a subscription, as in OneSignal since the Users model: its id is the
/// subscription id and its `external_user_id` is the `external_id` alias of the user that owns it.
struct PushDirectory: Codable, Sendable {
    struct User: Codable, Sendable {
        /// Alias label → id (`external_id` and custom labels; `onesignal_id` is the key, not kept here).
        var aliases: [String: String] = [:]
        var properties: GQLValues = [:]
    }

    struct Subscription: Codable, Sendable {
        /// OneSignal's `type`: `iOSPush`, `AndroidPush`, `Email`, `SMS` …
        var type: String
        var token: String?
        var enabled = true
        var testType: Int64?
        /// The `onesignal_id` of the user it belongs to.
        var owner: String
    }

    /// By `onesignal_id`.
    var users: [String: User] = [:]
    /// By subscription (player) id.
    var subscriptions: [String: Subscription] = [:]

    /// The user with alias `label` = `id` (`onesignal_id` names the user itself).
    func user(_ label: String, _ id: String) -> String? {
        if label == "onesignal_id" { return users[id] == nil ? nil : id }
        return users.first { $0.value.aliases[label] == id }?.key
    }

    /// The subscription of (`type`, `token`), if any.
    func subscription(type: String, token: String?) -> String? {
        guard let token, !token.isEmpty else { return nil }
        return subscriptions.first { $0.value.type == type && $0.value.token == token }?.key
    }

    /// A new user with `aliases`; its `onesignal_id`.
    mutating func newUser(_ aliases: [String: String] = [:]) -> String {
        let id = UUID().uuidString.lowercased()
        users[id] = User(aliases: aliases)
        return id
    }

    /// Adds the subscription, or moves the one with its (type, token) to `owner` and updates it: the status
    /// (201 made, 202 moved, 200 already there) and its id.
    mutating func place(_ subscription: Subscription) -> (Int, String) {
        if let found = self.subscription(type: subscription.type, token: subscription.token),
            var existing = subscriptions[found]
        {
            let moved = existing.owner != subscription.owner
            existing.owner = subscription.owner
            existing.enabled = subscription.enabled
            if let testType = subscription.testType { existing.testType = testType }
            subscriptions[found] = existing
            return (moved ? 202 : 200, found)
        }
        let id = UUID().uuidString.lowercased()
        subscriptions[id] = subscription
        return (201, id)
    }

    /// Forgets users left with no alias and no subscription (the anonymous users a move leaves behind).
    mutating func dropEmptyUsers() {
        let owners = Set(subscriptions.values.map(\.owner))
        users = users.filter { !$0.value.aliases.isEmpty || owners.contains($0.key) }
    }

    /// The user as today's API shows one: `identity` (with `onesignal_id`), `properties`, `subscriptions`.
    func view(_ id: String) -> GQLValue {
        let user = users[id] ?? User()
        var identity = user.aliases.mapValues { GQLValue.string($0) }
        identity["onesignal_id"] = .string(id)
        let owned = subscriptions.filter { $0.value.owner == id }.sorted { $0.key < $1.key }
        return [
            "identity": .object(identity), "properties": .object(user.properties),
            "subscriptions": .array(owned.map { Self.view($0.key, $0.value) }),
        ]
    }

    /// A subscription as today's API shows one.
    static func view(_ id: String, _ subscription: Subscription) -> GQLValue {
        var fields: GQLValues = [
            "id": .string(id), "type": .string(subscription.type), "enabled": .bool(subscription.enabled),
        ]
        if let token = subscription.token { fields["token"] = .string(token) }
        if let testType = subscription.testType { fields["test_type"] = .int(testType) }
        return .object(fields)
    }

    static let fileName = "app.json"

    /// The directory in `folder`, empty when there is none yet.
    /// - Throws: ``GQLCore/GQLError`` `.decoding` when `app.json` is not the emulator's.
    static func load(from folder: GQLDataFolder) throws -> PushDirectory {
        try folder.readJSON(PushDirectory.self, fileName, owner: "push emulator") ?? PushDirectory()
    }

    func save(to folder: GQLDataFolder) throws {
        try folder.writeJSON(self, to: Self.fileName, owner: "push emulator")
    }
}
