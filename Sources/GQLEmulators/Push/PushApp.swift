import Foundation
import GQLCore
import GQLCrypto

/// The OneSignal emulator's app: users, subscriptions and v1 players, with OneSignal's rules for who may change
/// what, and the ``PushInbox`` of notifications sent. Transport-free: ``PushRoutes`` maps HTTP onto it.
final class PushApp: Sendable {
    /// What a request proved about its sender.
    enum Caller: Sendable {
        /// The REST API key.
        case key
        /// A valid identity-verification JWT: its `external_id` and the email/SMS subscriptions it names.
        case identity(externalId: String?, contacts: Set<Contact>)
        /// Nothing (OneSignal's device SDK calls so).
        case anonymous
    }

    /// An email or SMS subscription, as an identity token names it.
    struct Contact: Hashable, Sendable {
        var type: String
        var token: String
    }

    let configuration: GQLPushEmulator.Configuration
    let folder: GQLDataFolder
    let inbox: PushInbox
    let directory: GQLLocked<PushDirectory>
    private let identityKey: P256PublicKey?

    /// The subscription types today's API knows.
    static let types: Set<String> = [
        "iOSPush", "AndroidPush", "FireOSPush", "ChromeExtensionPush", "ChromePush", "WindowsPush", "SafariLegacyPush",
        "FirefoxPush", "macOSPush", "HuaweiPush", "SafariPush", "Email", "SMS",
    ]
    static let contactTypes: Set<String> = ["Email", "SMS"]

    init(configuration: GQLPushEmulator.Configuration, folder: GQLDataFolder) throws {
        self.configuration = configuration
        self.folder = folder
        inbox = try PushInbox(folder: folder)
        directory = GQLLocked(try PushDirectory.load(from: folder))
        do {
            identityKey = try configuration.identityVerificationKey.map { try P256PublicKey(pem: $0) }
        } catch let error as GQLError {
            throw GQLError(.invalidArgument, "The push emulator's identity verification key: \(error.message)")
        }
    }

    // MARK: - Who is calling

    /// The caller an `Authorization` value proves, for today's API.
    /// - Throws: ``OneSignalError`` 403 for a wrong key (or a scheme the app does not take), 401 for an identity
    ///   token that fails its checks.
    func caller(authorization: String?) throws -> Caller {
        guard let authorization, !authorization.isEmpty else { return .anonymous }
        let (scheme, value) = Self.schemeAndValue(authorization)
        switch scheme {
        case "key", "basic":
            guard GQLEmulatorCredentials.same(value, configuration.restKey) else { throw Self.badKey }
            // Today's App API keys (`os_v2_…`) go only as `Key`; `Basic` is the legacy keys' scheme.
            guard scheme == "key" || !value.hasPrefix("os_v2_") else { throw Self.badKey }
            return .key
        case "bearer" where identityKey != nil:
            return try identity(value)
        default:
            throw Self.badKey
        }
    }

    static let badKey = OneSignalError.forbidden(
        "Access denied: give a valid App API key as 'Authorization: Key <key>'")

    /// The claims of an identity-verification token (ES256, `iss` the app id, `exp`, `identity`).
    private func identity(_ token: String) throws -> Caller {
        guard let identityKey else { throw Self.badKey }
        let claims: GQLValues
        do {
            let verifier = JWTVerifier(issuer: configuration.appId, leeway: 0, requiresExpiry: true)
            claims = try verifier.verify(token, key: .p256(identityKey), now: configuration.clock()).claims
        } catch let error as GQLError {
            throw OneSignalError.unauthorized("The identity token is not valid: \(error.message)")
        }
        guard case .object(let identity)? = claims["identity"] else {
            throw OneSignalError.unauthorized("The identity token has no identity claim")
        }
        var contacts = Set<Contact>()
        for entry in claims["subscriptions"]?.arrayValue ?? [] {
            if let type = entry["type"]?.stringValue, let token = entry["token"]?.stringValue {
                contacts.insert(Contact(type: type, token: token))
            }
        }
        return .identity(externalId: identity["external_id"]?.stringValue, contacts: contacts)
    }

    /// Identity verification: a change to who a user is (`externalId`), or an email or SMS subscription added,
    /// needs the REST API key or an identity token for that user naming those contacts.
    private func checkIdentity(_ caller: Caller, externalId: String?, contacts: [Contact]) throws {
        guard identityKey != nil else { return }
        switch caller {
        case .key:
            return
        case .identity(let verified, let named):
            if let externalId, verified != externalId {
                throw OneSignalError.unauthorized("The identity token is for another user")
            }
            if contacts.contains(where: { !named.contains($0) }) {
                throw OneSignalError.unauthorized("The identity token does not name this email or SMS subscription")
            }
        case .anonymous:
            if externalId != nil || !contacts.isEmpty {
                throw OneSignalError.unauthorized(
                    "Identity verification is on: give 'Authorization: Bearer <identity JWT>'")
            }
        }
    }

    static func schemeAndValue(_ header: String) -> (String, String) {
        let parts = header.split(separator: " ", maxSplits: 1)
        let scheme = parts.first.map { $0.lowercased() } ?? ""
        let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        return (scheme, value)
    }

    // MARK: - Users and subscriptions

    /// `POST /apps/{app_id}/users`: a user with these aliases (or the one that has them), its subscriptions added or
    /// moved to it; 201 when made, 200 when it existed.
    func createUser(_ body: GQLValues, caller: Caller) throws -> (Int, GQLValue) {
        let identity = try Self.aliases(body["identity"])
        if identity.count == 1, identity["onesignal_id"] != nil {
            throw OneSignalError("onesignal_id is read-only: give another alias to create a user")
        }
        guard let list = body["subscriptions"].map({ $0.isNull ? [] : $0.arrayValue }) ?? [] else {
            throw OneSignalError("subscriptions must be an array of at most 20")
        }
        guard list.count <= 20 else { throw OneSignalError("subscriptions must be an array of at most 20") }
        let subscriptions = try list.map(Self.subscriptionFields)
        guard !identity.isEmpty || !subscriptions.isEmpty else {
            throw OneSignalError("Give at least one alias or one subscription")
        }
        let properties = body["properties"]
        if let properties, !properties.isNull, properties.objectValue == nil {
            throw OneSignalError("properties must be an object")
        }
        try checkIdentity(caller, externalId: identity["external_id"], contacts: Self.contacts(subscriptions))
        return try change { directory in
            var owner = identity.compactMap { directory.user($0.key, $0.value) }.first
            if identity.isEmpty {
                // A subscription identifies its user: a request with no alias names the owner of one it lists.
                owner =
                    subscriptions.compactMap { directory.subscription(type: $0.type, token: $0.token) }
                    .compactMap { directory.subscriptions[$0]?.owner }.first
            }
            let status = owner == nil ? 201 : 200
            let id = owner ?? directory.newUser()
            directory.users[id]?.aliases.merge(identity.filter { $0.key != "onesignal_id" }) { $1 }
            directory.users[id]?.properties.merge(properties?.objectValue ?? [:]) { $1 }
            for var subscription in subscriptions {
                subscription.owner = id
                _ = directory.place(subscription)
            }
            directory.dropEmptyUsers()
            return (status, directory.view(id))
        }
    }

    /// `GET /apps/{app_id}/users/by/{label}/{id}`.
    func viewUser(label: String, id: String) throws -> GQLValue {
        try directory.withLock { directory in
            guard let user = directory.user(label, id) else {
                throw OneSignalError.notFound("No user with \(label) \(id)", code: "user-not-found")
            }
            return directory.view(user)
        }
    }

    /// `POST /apps/{app_id}/users/by/{label}/{id}/subscriptions`: 201 made, 202 moved here, 200 already here.
    func addSubscription(label: String, alias: String, body: GQLValues, caller: Caller) throws -> (Int, GQLValue) {
        var subscription = try Self.subscriptionFields(body["subscription"] ?? .null)
        if case .anonymous = caller { throw Self.badKey }
        try checkIdentity(
            caller, externalId: label == "external_id" ? alias : nil, contacts: Self.contacts([subscription]))
        return try change { directory in
            guard let owner = directory.user(label, alias) else {
                throw OneSignalError.notFound("No user with \(label) \(alias)", code: "user-not-found")
            }
            subscription.owner = owner
            let (status, id) = directory.place(subscription)
            directory.dropEmptyUsers()
            return (status, ["subscription": directory.subscriptions[id].map { PushDirectory.view(id, $0) } ?? .null])
        }
    }

    /// `PATCH /apps/{app_id}/subscriptions/{id}`: its `enabled`, token or test type (not its type); 202.
    func updateSubscription(_ id: String, body: GQLValues) throws {
        guard case .object(let fields)? = body["subscription"] else {
            throw OneSignalError("The body needs a subscription object")
        }
        if let enabled = fields["enabled"], enabled.boolValue == nil {
            throw OneSignalError("enabled must be a boolean")
        }
        if let token = fields["token"], token.stringValue == nil { throw OneSignalError("token must be a string") }
        try change { directory in
            guard var subscription = directory.subscriptions[id] else {
                throw OneSignalError.notFound("No subscription with id \(id)", code: "subscription-not-found")
            }
            if let type = fields["type"]?.stringValue, type != subscription.type {
                throw OneSignalError("A subscription's type cannot change: delete it and create another")
            }
            if let enabled = fields["enabled"]?.boolValue { subscription.enabled = enabled }
            if let token = fields["token"]?.stringValue { subscription.token = token }
            if let testType = fields["test_type"]?.intValue { subscription.testType = testType }
            directory.subscriptions[id] = subscription
        }
    }

    /// `DELETE /apps/{app_id}/subscriptions/{id}`; 202.
    func deleteSubscription(_ id: String) throws {
        try change { directory in
            guard directory.subscriptions.removeValue(forKey: id) != nil else {
                throw OneSignalError.notFound("No subscription with id \(id)", code: "subscription-not-found")
            }
            directory.dropEmptyUsers()
        }
    }

    /// `PATCH /apps/{app_id}/subscriptions/{id}/owner`: the subscription moves to the user `identity` names (made
    /// when an `external_id` has no user yet).
    func transferSubscription(_ id: String, body: GQLValues, caller: Caller) throws -> GQLValue {
        let identity = try Self.aliases(body["identity"])
        guard identity.count == 1, let (label, alias) = identity.first.map({ ($0.key, $0.value) }) else {
            throw OneSignalError("identity must name exactly one alias of the user to transfer to")
        }
        try checkIdentity(caller, externalId: label == "external_id" ? alias : nil, contacts: [])
        return try change { directory in
            guard directory.subscriptions[id] != nil else {
                throw OneSignalError.notFound("No subscription with id \(id)", code: "subscription-not-found")
            }
            var owner = directory.user(label, alias)
            if owner == nil {
                guard label != "onesignal_id" else {
                    throw OneSignalError.notFound("No user with onesignal_id \(alias)", code: "user-not-found")
                }
                owner = directory.newUser([label: alias])
            }
            let target = owner ?? ""
            directory.subscriptions[id]?.owner = target
            directory.dropEmptyUsers()
            var identity = (directory.users[target]?.aliases ?? [:]).mapValues { GQLValue.string($0) }
            identity["onesignal_id"] = .string(target)
            return ["identity": .object(identity)]
        }
    }

    // MARK: - Helpers

    /// Applies `body` to the directory and writes it to the data folder under the lock.
    func change<T>(_ body: (inout PushDirectory) throws -> T) throws -> T {
        try directory.withLock { directory in
            var copy = directory
            let result = try body(&copy)
            try copy.save(to: folder)
            directory = copy
            return result
        }
    }

    /// An `identity` object: alias labels to non-empty string ids.
    static func aliases(_ value: GQLValue?) throws -> [String: String] {
        guard let value, !value.isNull else { return [:] }
        guard case .object(let object) = value else {
            throw OneSignalError("identity must map alias labels to alias ids (non-empty strings)")
        }
        var aliases: [String: String] = [:]
        for (label, id) in object {
            guard !label.isEmpty, let text = id.stringValue, !text.isEmpty, label.count <= 128, text.count <= 1024
            else { throw OneSignalError("identity must map alias labels to alias ids (non-empty strings)") }
            aliases[label] = text
        }
        return aliases
    }

    /// A subscription object of a request (`type` required and known; `token`, `enabled`, `test_type` checked).
    static func subscriptionFields(_ value: GQLValue) throws -> PushDirectory.Subscription {
        guard case .object(let fields) = value, let type = fields["type"]?.stringValue, types.contains(type) else {
            throw OneSignalError("A subscription needs a type, one of \(types.sorted().joined(separator: ", "))")
        }
        if let token = fields["token"], !token.isNull, token.stringValue == nil {
            throw OneSignalError("A subscription token must be a string")
        }
        if let enabled = fields["enabled"], enabled.boolValue == nil {
            throw OneSignalError("enabled must be a boolean")
        }
        return PushDirectory.Subscription(
            type: type, token: fields["token"]?.stringValue, enabled: fields["enabled"]?.boolValue ?? true,
            testType: fields["test_type"]?.intValue, owner: "")
    }

    static func contacts(_ subscriptions: [PushDirectory.Subscription]) -> [Contact] {
        subscriptions.filter { contactTypes.contains($0.type) }.map { Contact(type: $0.type, token: $0.token ?? "") }
    }
}
