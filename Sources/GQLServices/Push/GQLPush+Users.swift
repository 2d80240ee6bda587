import Foundation
import GQLCore

/// OneSignal's Users and Subscriptions API, which replaces v1's players with an App API key: a user has aliases
/// (`external_id`, custom labels) and up to 20 subscriptions (push, email, SMS), each with its own id.
/// Pages: <https://documentation.onesignal.com/reference/create-user>,
/// <https://documentation.onesignal.com/reference/create-subscription>,
/// <https://documentation.onesignal.com/reference/update-subscription>,
/// <https://documentation.onesignal.com/reference/delete-subscription>,
/// <https://documentation.onesignal.com/reference/transfer-subscription>.
extension GQLPush {
    /// One way a user receives messages: a push token, an email address or a phone number.
    ///
    /// ```swift
    /// let email = GQLPush.Subscription(kind: .email, token: "ann@example.com")
    /// ```
    public struct Subscription: Sendable, Hashable {
        /// OneSignal's subscription `type`.
        public struct Kind: RawRepresentable, Sendable, Hashable {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let iOSPush = Kind(rawValue: "iOSPush")
            public static let androidPush = Kind(rawValue: "AndroidPush")
            public static let email = Kind(rawValue: "Email")
            public static let sms = Kind(rawValue: "SMS")
        }

        /// OneSignal's id of the subscription (`nil` before it exists).
        public var id: String?
        public var kind: Kind
        /// The push token (hex for APNs), the email address, or the phone number in E.164 form.
        public var token: String
        /// Whether it receives messages; `nil` leaves OneSignal's default.
        public var enabled: Bool?
        /// 1 for a development (sandbox) APNs token, 2 for an ad-hoc one; `nil` for production.
        public var testType: Int?

        public init(kind: Kind, token: String, enabled: Bool? = nil, testType: Int? = nil, id: String? = nil) {
            self.kind = kind
            self.token = token
            self.enabled = enabled
            self.testType = testType
            self.id = id
        }

        var json: GQLValue {
            var fields: GQLValues = ["type": .string(kind.rawValue), "token": .string(token)]
            if let enabled { fields["enabled"] = .bool(enabled) }
            if let testType { fields["test_type"] = .int(Int64(testType)) }
            return .object(fields)
        }

        init?(json: GQLValue) {
            guard let kind = json["type"]?.stringValue else { return nil }
            self.init(
                kind: Kind(rawValue: kind), token: json["token"]?.stringValue ?? "",
                enabled: json["enabled"]?.boolValue,
                testType: json["test_type"]?.intValue.map { Int($0) }, id: json["id"]?.stringValue)
        }
    }

    /// A OneSignal user as an answer describes it.
    public struct User: Sendable, Hashable {
        /// OneSignal's own id of the user (`onesignal_id`).
        public var onesignalId: String?
        /// Every alias of the user by its label: `external_id`, `onesignal_id` and custom ones.
        public var aliases: [String: String]
        public var subscriptions: [Subscription]
        /// The app's id of the user (the `external_id` alias).
        public var externalId: String? { aliases["external_id"] }

        init(json: GQLValue) {
            var aliases: [String: String] = [:]
            for (label, value) in json["identity"]?.objectValue ?? [:] {
                if let text = value.stringValue { aliases[label] = text }
            }
            self.aliases = aliases
            self.onesignalId = aliases["onesignal_id"]
            self.subscriptions = (json["subscriptions"]?.arrayValue ?? []).compactMap(Subscription.init(json:))
        }
    }

    /// Creates a user, or adds to the user its aliases name (`POST /apps/{app_id}/users`): its aliases, and its
    /// subscriptions, which move to it from another user when their (type, token) exists already.
    ///
    /// ```swift
    /// let user = try await push.createUser(
    ///     externalId: "user-1001", subscriptions: [.init(kind: .email, token: "ann@example.com")])
    /// print(user.onesignalId ?? "", user.subscriptions.map(\.id))
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for a legacy key (the v1 API has no users), no alias and no
    ///   subscription, more than 20 subscriptions or an empty token; `.http` with OneSignal's errors.
    @discardableResult
    public func createUser(
        externalId: String?, aliases: [String: String] = [:], subscriptions: [Subscription] = []
    ) async throws -> User {
        try await createUser(
            externalId: externalId, aliases: aliases, subscriptions: subscriptions, properties: [:],
            identityToken: nil, operation: "createUser")
    }

    /// Adds `subscription` to the user whose external id is `externalId`
    /// (`POST /apps/{app_id}/users/by/external_id/{id}/subscriptions`) and returns it with its id. A (type, token)
    /// that exists on another user moves to this one.
    ///
    /// ```swift
    /// let sms = try await push.addSubscription(.init(kind: .sms, token: "+15551234567"), toUser: "user-1001")
    /// ```
    public func addSubscription(_ subscription: Subscription, toUser externalId: String) async throws -> Subscription {
        try requireUsersAPI("addSubscription")
        guard !externalId.isEmpty, !subscription.token.isEmpty else {
            throw GQLError(
                .invalidArgument, "the external id and the token must not be empty", operation: "addSubscription")
        }
        let user = "apps/\(GQLREST.percentEncoded(appId))/users/by/external_id/\(GQLREST.percentEncoded(externalId))"
        let answer = try await rest.invoke(
            .post, user + "/subscriptions", json: ["subscription": subscription.json],
            headers: ["Authorization": authorization])
        try Self.checkErrors(answer, operation: "addSubscription")
        guard let added = Subscription(json: answer["subscription"] ?? .null), added.id?.isEmpty == false else {
            throw GQLError(
                .invalidResponse, "OneSignal added the subscription without giving its id",
                operation: "addSubscription")
        }
        return added
    }

    /// Turns a subscription's messages on or off (`PATCH /apps/{app_id}/subscriptions/{id}` with `enabled`), for an
    /// opt-out kept outside OneSignal's SDK.
    ///
    /// ```swift
    /// try await push.updateSubscription(id: push.subscriptionId ?? "", enabled: false)
    /// ```
    public func updateSubscription(id: String, enabled: Bool) async throws {
        try requireUsersAPI("updateSubscription")
        let answer = try await rest.invoke(
            .patch, try subscriptionPath(id, "updateSubscription"), json: ["subscription": ["enabled": .bool(enabled)]],
            headers: ["Authorization": authorization])
        try Self.checkErrors(answer, operation: "updateSubscription")
    }

    /// Deletes a subscription (`DELETE /apps/{app_id}/subscriptions/{id}`): no message reaches it any more, though
    /// the same token may subscribe again.
    ///
    /// ```swift
    /// try await push.deleteSubscription(id: staleId)
    /// ```
    public func deleteSubscription(id: String) async throws {
        try requireUsersAPI("deleteSubscription")
        let answer = try await rest.invoke(
            .delete, try subscriptionPath(id, "deleteSubscription"), headers: ["Authorization": authorization])
        try Self.checkErrors(answer, operation: "deleteSubscription")
    }

    // MARK: - Internals

    /// `POST /apps/{app_id}/users`, authorized by the identity token when one is given (identity verification),
    /// by the REST API key otherwise.
    func createUser(
        externalId: String?, aliases: [String: String], subscriptions: [Subscription], properties: GQLValues,
        identityToken: String?, operation: String
    ) async throws -> User {
        try requireUsersAPI(operation)
        var identity = aliases
        if let externalId { identity["external_id"] = externalId }
        guard !identity.isEmpty || !subscriptions.isEmpty else {
            throw GQLError(.invalidArgument, "a user needs an alias or a subscription", operation: operation)
        }
        guard subscriptions.count <= 20, !subscriptions.contains(where: \.token.isEmpty),
            !identity.contains(where: { $0.key.isEmpty || $0.value.isEmpty })
        else {
            throw GQLError(
                .invalidArgument, "at most 20 subscriptions, and no empty token, alias label or alias id",
                operation: operation)
        }
        var body: GQLValues = ["subscriptions": .array(subscriptions.map(\.json))]
        if !identity.isEmpty { body["identity"] = .object(identity.mapValues { .string($0) }) }
        if !properties.isEmpty { body["properties"] = .object(properties) }
        let answer = try await rest.invoke(
            .post, "apps/\(GQLREST.percentEncoded(appId))/users", json: .object(body),
            headers: ["Authorization": identityToken.map { "Bearer \($0)" } ?? authorization])
        try Self.checkErrors(answer, operation: operation)
        return User(json: answer)
    }

    /// `PATCH /apps/{app_id}/subscriptions/{id}/owner`: the subscription moves to the user with `externalId`.
    func transferSubscription(_ id: String, toExternalId externalId: String, identityToken: String?) async throws {
        let answer = try await rest.invoke(
            .patch, try subscriptionPath(id, "register") + "/owner",
            json: ["identity": ["external_id": .string(externalId)]],
            headers: ["Authorization": identityToken.map { "Bearer \($0)" } ?? authorization])
        try Self.checkErrors(answer, operation: "register")
    }

    private func subscriptionPath(_ id: String, _ operation: String) throws -> String {
        guard !id.isEmpty else {
            throw GQLError(.invalidArgument, "the subscription id is empty", operation: operation)
        }
        return "apps/\(GQLREST.percentEncoded(appId))/subscriptions/\(GQLREST.percentEncoded(id))"
    }

    private func requireUsersAPI(_ operation: String) throws {
        guard keyKind == .app else {
            throw GQLError(
                .invalidArgument,
                "the Users and Subscriptions API needs an App API key (os_v2_app_…); a legacy key speaks the v1 API",
                operation: operation)
        }
    }
}
