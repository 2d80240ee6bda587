import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto

/// Push notifications through OneSignal's REST API: this device's push subscription and its user, users and
/// subscriptions managed from a server, and notifications to users by their external ids, to segments or by filters.
///
/// ```swift
/// let push = GQLPush(appId: "…", restKey: "os_v2_app_…")   // today's App API key: api.onesignal.com
/// try await push.token(deviceToken)                 // POST /apps/{app_id}/users: a user with this push subscription
/// try await push.register("user-1001")              // the subscription moves to the user whose external_id it is
/// try await push.send(chatId: "c42", userIds: ["user-1002"], text: "Hello")   // include_aliases.external_id
/// try await push.unregister()                       // the subscription goes to a new anonymous user
/// ```
///
/// The original toolkit's static form works as before: `GQLPush.setup(appId, keyAPI)`, then
/// `GQLPush.token(deviceToken)`, `try await GQLPush.register(userId)` … on the shared instance.
///
/// **The key's kind decides the API** (``KeyKind``). An App API key, the kind OneSignal issues today, goes in
/// `Authorization: Key <key>` to `https://api.onesignal.com`: the Users and Subscriptions API for devices and users,
/// `POST /notifications` with `include_aliases` and `target_channel` for notifications. A legacy REST API key goes in
/// `Authorization: Basic <key>` to the v1 API at `https://onesignal.com/api/v1` (players, `include_external_user_ids`),
/// kept for apps that still run on it. Without an explicit `keyKind`, the key's form decides: see ``KeyKind/of(_:)``.
///
/// Every call checks OneSignal's answer: a non-2xx status throws ``GQLCore/GQLError`` `.http` with OneSignal's
/// `errors` in the message; a 200 answer that carries `errors` is surfaced (see ``send(_:to:channel:title:data:)``).
/// The REST API key travels only in the `Authorization` header (and, with a legacy key, in the identity hash), never
/// in logs or errors.
///
/// A REST API key can notify every user of the app: it belongs on a server. OneSignal's documentation says so
/// (<https://documentation.onesignal.com/docs/keys-and-ids>: "never expose them in client-side code"). An app that
/// ships it anyway, as the original toolkit's users did, should at least have identity verification on: see
/// <doc:Push> for what GQLPush does for it with each kind of key.
public final class GQLPush: Sendable {
    /// The device platform: OneSignal's `device_type` (v1) and subscription `type` (today's API).
    public enum DeviceType: Int, Sendable {
        case iOS = 0
        case android = 1

        /// The subscription type of today's API.
        var subscriptionType: Subscription.Kind { self == .iOS ? .iOSPush : .androidPush }
    }

    /// The kind of REST API key, which decides the `Authorization` scheme and the API GQLPush speaks.
    ///
    /// ```swift
    /// GQLPush.KeyKind.of("os_v2_app_2y2z…")                      // .app
    /// GQLPush.KeyKind.of("NGEwMGZmMjItY2NkNy0xMWUzLTk5ZDUtMDAwYzI5NDBlNjJj")   // .legacy
    /// let push = GQLPush(appId: appId, restKey: key, keyKind: .app)   // say it when the form cannot
    /// ```
    public enum KeyKind: String, Sendable, Hashable {
        /// An App API key ("Rich Authentication Token"), the kind OneSignal issues today: `Authorization: Key`,
        /// `https://api.onesignal.com`, the Users and Subscriptions API.
        case app
        /// A legacy REST API key: `Authorization: Basic`, the v1 API at `https://onesignal.com/api/v1`.
        case legacy

        /// The kind of `key` by its form: keys OneSignal issues today begin `os_v2_app_` (organization keys
        /// `os_v2_org_`, which cannot send notifications); legacy keys are 48 characters of base64 and begin with
        /// neither. Anything without the `os_v2_` prefix is taken for legacy: give the initializer an explicit
        /// `keyKind` for a key of another form.
        public static func of(_ key: String) -> KeyKind { key.hasPrefix("os_v2_") ? .app : .legacy }

        /// The API's address when none is given.
        var defaultBaseURL: String { self == .app ? "https://api.onesignal.com" : "https://onesignal.com" }
    }

    /// The OneSignal app.
    public let appId: String
    /// The kind of the REST API key, given or read from its form.
    public let keyKind: KeyKind
    let restKey: String
    let deviceType: DeviceType
    let sandbox: Bool
    let rest: GQLREST
    let state: GQLLocked<State>

    struct State {
        /// The v1 player id, or today's push subscription id.
        var deviceId: String?
        /// The push token as OneSignal takes it (hex), once ``token(_:)`` was given it.
        var pushToken: String?
        var userId: String?
        /// The identity-verification token given with the user id, for a registration that sends it later.
        var identityToken: String?
        /// The device registration in flight, which ``register(_:identityToken:)`` and ``unregister()`` wait for.
        var registration: Task<String, any Error>?
        /// Counts registrations, so one that ends clears only its own task.
        var registrations = 0
    }

    /// A client for one OneSignal app.
    ///
    /// ```swift
    /// let push = GQLPush(appId: appId, restKey: key)                                    // OneSignal itself
    /// let push = GQLPush(appId: appId, restKey: key, baseURL: "http://127.0.0.1:8080")  // a local stand-in
    /// ```
    /// - Parameters:
    ///   - restKey: the app's REST API key: an App API key (`os_v2_app_…`) or a legacy one.
    ///   - keyKind: the key's kind; `nil` reads it from the key's form (``KeyKind/of(_:)``).
    ///   - baseURL: where OneSignal's API is; `nil` is `https://api.onesignal.com` for an App API key,
    ///     `https://onesignal.com` (paths `api/v1/…`) for a legacy one.
    ///   - deviceType: the platform of this device. Default iOS.
    ///   - sandbox: the push token is a development (sandbox) APNs token (`test_type: 1`).
    ///   - playerId: OneSignal's id of this device from an earlier run (the v1 player id, or today's push
    ///     subscription id), to skip registering it again.
    ///   - httpClient: an AsyncHTTPClient whose event loops and settings to use (see ``GQLREST``); `nil` uses the
    ///     shared event loops.
    ///   - timeout: the longest a call may take, its answer's head and whole body included. Default 30 s.
    public init(
        appId: String, restKey: String, keyKind: KeyKind? = nil, baseURL: String? = nil, deviceType: DeviceType = .iOS,
        sandbox: Bool = false, playerId: String? = nil, httpClient: HTTPClient? = nil, timeout: Duration = .seconds(30)
    ) {
        let kind = keyKind ?? KeyKind.of(restKey)
        self.appId = appId
        self.restKey = restKey
        self.keyKind = kind
        self.deviceType = deviceType
        self.sandbox = sandbox
        self.rest = GQLREST(baseURL: baseURL ?? kind.defaultBaseURL, timeout: timeout, httpClient: httpClient)
        self.state = GQLLocked(State(deviceId: playerId))
    }

    /// The initializer of earlier versions, whose flag turned the v1 identity hash on.
    ///
    /// The hash is now sent whenever the key is legacy (it costs nothing when the app's identity verification is
    /// off, and an app with it on no longer fails until it finds the flag); today's API verifies identity with a
    /// JWT instead (``identityToken(appId:externalId:subscriptions:privateKeyPEM:lifetime:now:)``).
    @available(*, deprecated, message: "the v1 identity hash is always sent with a legacy key; drop the argument")
    public convenience init(
        appId: String, restKey: String, baseURL: String? = nil, identityVerification: Bool,
        deviceType: DeviceType = .iOS, sandbox: Bool = false, playerId: String? = nil, httpClient: HTTPClient? = nil,
        timeout: Duration = .seconds(30)
    ) {
        self.init(
            appId: appId, restKey: restKey, baseURL: baseURL, deviceType: deviceType, sandbox: sandbox,
            playerId: playerId, httpClient: httpClient, timeout: timeout)
    }

    /// OneSignal's id for this device once ``token(_:)`` registered it (or as given to the initializer): the v1
    /// player id with a legacy key, the push subscription id with an App API key.
    public var playerId: String? { state.withLock { $0.deviceId } }

    /// The push subscription id of this device (today's name for ``playerId``).
    public var subscriptionId: String? { playerId }

    /// The user id (external id) this device is registered to, if any.
    public var userId: String? { state.withLock { $0.userId } }

    /// Releases the client's connections.
    public func shutdown() async throws {
        try await rest.shutdown()
    }

    /// A push token as OneSignal takes it: lowercase hex of the bytes APNs gave.
    ///
    /// ```swift
    /// GQLPush.hex(deviceToken)   // "a1b2…"
    /// ```
    public static func hex(_ deviceToken: Data) -> String { Bytes.hex(deviceToken) }

    /// The `Authorization` value of the REST API key: `Key <key>` for an App API key, `Basic <key>` for a legacy one.
    var authorization: String { (keyKind == .app ? "Key " : "Basic ") + restKey }

    /// Throws OneSignal's `errors` (an array of messages, or an object of lists) when a 2xx answer carries them.
    static func checkErrors(_ answer: GQLValue, operation: String) throws {
        let errors = messages(answer["errors"])
        guard !errors.isEmpty else { return }
        throw GQLError(
            .http, "OneSignal refused the \(operation): \(errors.joined(separator: "; "))", operation: operation)
    }

    /// The messages of an `errors` value: strings, `{code, title}` objects (today's API), or `name: values` of an
    /// object.
    static func messages(_ errors: GQLValue?) -> [String] {
        switch errors {
        case .array(let items)?:
            return items.map { item in
                item.stringValue ?? item["title"]?.stringValue ?? ((try? item.jsonString()) ?? "")
            }
        case .object(let fields)?:
            return fields.keys.sorted().map { key in
                let values = fields[key]?.arrayValue?.compactMap(\.stringValue) ?? []
                return values.isEmpty ? key : "\(key): \(values.joined(separator: ", "))"
            }
        default:
            return []
        }
    }
}
