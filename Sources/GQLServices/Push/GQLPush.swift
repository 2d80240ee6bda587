import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto

/// Push notifications through OneSignal's REST API v1: the device's registration, the signed-in user's
/// external id (with identity verification), and notifications to users by their ids.
///
/// ```swift
/// let push = GQLPush(appId: "…", restKey: "…", identityVerification: true)
/// try await push.token(deviceToken)                 // POST /api/v1/players: this device, by its APNs token
/// try await push.register("user-1001")              // PUT /api/v1/players/{id}: external_user_id (+ its hash)
/// try await push.send(chatId: "c42", userIds: ["user-1002"], text: "Hello")   // POST /api/v1/notifications
/// try await push.unregister()                       // the device no longer belongs to the user
/// ```
///
/// The original toolkit's static form works as before: `GQLPush.setup(appId, keyAPI)`, then
/// `GQLPush.token(deviceToken)`, `try await GQLPush.register(userId)` … on the shared instance.
///
/// Every call checks OneSignal's answer: a non-2xx status throws ``GQLCore/GQLError`` `.http` with OneSignal's
/// `errors` in the message; a 200 answer that carries `errors` is surfaced (see ``send(chatId:userIds:text:)``).
/// The REST API key travels only in `Authorization: Basic <key>` of ``send(chatId:userIds:text:)`` (device calls
/// need none) and in the identity hash, never in logs or errors.
///
/// A REST API key can send notifications to every user of the app: it belongs on a server. An app that ships it
/// (as the original toolkit's users did) should at least turn on identity verification, so that a device can
/// only claim the user id whose hash it was given.
public final class GQLPush: Sendable {
    /// The device platform OneSignal records (`device_type`).
    public enum DeviceType: Int, Sendable {
        case iOS = 0
        case android = 1
    }

    /// The OneSignal app.
    public let appId: String
    /// Whether ``register(_:)`` sends `external_user_id_auth_hash` (the app's identity verification is on).
    public let identityVerification: Bool
    let restKey: String
    let deviceType: DeviceType
    let sandbox: Bool
    let rest: GQLREST
    let state: GQLLocked<State>

    struct State {
        var playerId: String?
        var userId: String?
        /// The device registration in flight, which ``register(_:)`` and ``unregister()`` wait for.
        var registration: Task<String, any Error>?
        /// Counts registrations, so one that ends clears only its own task.
        var registrations = 0
    }

    /// A client for one OneSignal app.
    ///
    /// ```swift
    /// let push = GQLPush(appId: appId, restKey: key, baseURL: "http://127.0.0.1:8080")   // a local stand-in
    /// ```
    /// - Parameters:
    ///   - restKey: the app's REST API key (`Authorization: Basic <key>`; the identity hash's key).
    ///   - baseURL: where OneSignal's API is; default `https://onesignal.com`.
    ///   - identityVerification: send the identity hash with the external user id (turn on when the app's
    ///     identity verification is on).
    ///   - deviceType: the platform of this device. Default iOS.
    ///   - sandbox: the push token is a development (sandbox) APNs token (`test_type: 1`).
    ///   - playerId: the OneSignal id of this device from an earlier run, to skip registering it again.
    ///   - httpClient: an AsyncHTTPClient whose event loops and settings to use (see ``GQLREST``); `nil` uses the
    ///     shared event loops.
    ///   - timeout: the longest a call may take, its answer's head and whole body included. Default 30 s.
    public init(
        appId: String, restKey: String, baseURL: String = "https://onesignal.com", identityVerification: Bool = false,
        deviceType: DeviceType = .iOS, sandbox: Bool = false, playerId: String? = nil, httpClient: HTTPClient? = nil,
        timeout: Duration = .seconds(30)
    ) {
        self.appId = appId
        self.restKey = restKey
        self.identityVerification = identityVerification
        self.deviceType = deviceType
        self.sandbox = sandbox
        self.rest = GQLREST(baseURL: baseURL, timeout: timeout, httpClient: httpClient)
        self.state = GQLLocked(State(playerId: playerId))
    }

    /// OneSignal's id for this device, once ``token(_:)`` registered it (or as given to the initializer).
    public var playerId: String? { state.withLock { $0.playerId } }

    /// The user id this device is registered to, if any.
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

    /// Registers this device with its push token (`POST /api/v1/players`) and returns its player id; a user id
    /// given to ``register(_:)`` before is registered with it.
    ///
    /// ```swift
    /// let playerId = try await push.token(deviceToken)
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty token, `.http` with OneSignal's errors,
    ///   `.invalidResponse` for an answer without an id, and the transport errors.
    @discardableResult
    public func token(_ deviceToken: Data) async throws -> String {
        try await startRegistration(deviceToken).value
    }

    /// Starts registering the device now (so a ``register(_:)`` called next waits for it) and returns the task.
    func startRegistration(_ deviceToken: Data) throws -> Task<String, any Error> {
        guard !deviceToken.isEmpty else {
            throw GQLError(.invalidArgument, "the device token is empty", operation: "token")
        }
        let identifier = Self.hex(deviceToken)
        return state.withLock { state in
            state.registrations += 1
            let serial = state.registrations
            let userId = state.userId
            let task = Task {
                let result: Result<String, any Error>
                do {
                    result = .success(try await self.addPlayer(identifier: identifier, userId: userId))
                } catch {
                    result = .failure(error)
                }
                self.state.withLock { state in
                    if case .success(let player) = result { state.playerId = player }
                    if state.registrations == serial { state.registration = nil }
                }
                return try result.get()
            }
            state.registration = task
            return task
        }
    }

    /// Registers the device to `userId` (OneSignal's `external_user_id`), with
    /// hex(HMAC-SHA256(REST API key, userId)) as `external_user_id_auth_hash` when identity verification is on.
    ///
    /// Called before the device has a player id, it waits for the registration in flight, or keeps the user id for
    /// ``token(_:)`` to send.
    ///
    /// ```swift
    /// try await push.register(auth.userId() ?? "")
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.invalidArgument` for an empty user id, `.http` with OneSignal's errors
    ///   (a wrong identity hash …), and the transport errors.
    public func register(_ userId: String) async throws {
        guard !userId.isEmpty else {
            throw GQLError(
                .invalidArgument, "the user id is empty; use unregister() to remove it", operation: "register")
        }
        guard let player = try await currentPlayer(keeping: userId) else { return }
        try await editPlayer(player, externalUserId: userId, operation: "register")
        state.withLock { $0.userId = userId }
    }

    /// Removes the user id from this device (`external_user_id` set to `""`), so it no longer receives that user's
    /// notifications; the device stays registered.
    ///
    /// ```swift
    /// try await push.unregister()
    /// ```
    public func unregister() async throws {
        guard let player = try await currentPlayer(keeping: nil) else { return }
        try await editPlayer(player, externalUserId: "", operation: "unregister")
        state.withLock { $0.userId = nil }
    }

    // MARK: - Requests

    /// The player id, after the registration in flight; `nil` (with `userId` kept for ``token(_:)``) when the
    /// device is not registered yet.
    private func currentPlayer(keeping userId: String?) async throws -> String? {
        let (player, pending) = state.withLock { state in
            if state.playerId == nil, state.registration == nil { state.userId = userId }
            return (state.playerId, state.registration)
        }
        if let player { return player }
        guard let pending else { return nil }
        return try await pending.value
    }

    private func addPlayer(identifier: String, userId: String?) async throws -> String {
        var body: GQLValues = [
            "app_id": .string(appId), "device_type": .int(Int64(deviceType.rawValue)),
            "identifier": .string(identifier),
            "language": .string(Locale.current.language.languageCode?.identifier ?? "en"),
            "timezone": .int(Int64(TimeZone.current.secondsFromGMT())),
        ]
        if sandbox { body["test_type"] = 1 }
        if let userId { body.merge(identity(userId)) { $1 } }
        let answer = try await rest.invoke(.post, "api/v1/players", json: .object(body))
        try Self.checkErrors(answer, operation: "token")
        guard let id = answer["id"]?.stringValue, !id.isEmpty else {
            throw GQLError(
                .invalidResponse, "OneSignal registered the device without giving its id", operation: "token")
        }
        return id
    }

    private func editPlayer(_ player: String, externalUserId: String, operation: String) async throws {
        var body: GQLValues = ["app_id": .string(appId)]
        body.merge(identity(externalUserId)) { $1 }
        let answer = try await rest.invoke(
            .put, "api/v1/players/\(GQLREST.percentEncoded(player))", json: .object(body))
        try Self.checkErrors(answer, operation: operation)
        guard answer["success"]?.boolValue != false else {
            throw GQLError(.invalidResponse, "OneSignal answered success: false", operation: operation)
        }
    }

    /// `external_user_id`, with its hash when identity verification is on (none for `""`, which removes it).
    private func identity(_ userId: String) -> GQLValues {
        var fields: GQLValues = ["external_user_id": .string(userId)]
        if identityVerification, !userId.isEmpty {
            fields["external_user_id_auth_hash"] = .string(
                Bytes.hex(HMACSHA256.authenticate(Data(userId.utf8), key: Data(restKey.utf8))))
        }
        return fields
    }

    /// Throws OneSignal's `errors` (an array of messages, or an object of lists) when a 2xx answer carries them.
    static func checkErrors(_ answer: GQLValue, operation: String) throws {
        let errors = messages(answer["errors"])
        guard !errors.isEmpty else { return }
        throw GQLError(
            .http, "OneSignal refused the \(operation): \(errors.joined(separator: "; "))", operation: operation)
    }

    /// The messages of an `errors` value: strings, or `name: values` of an object.
    static func messages(_ errors: GQLValue?) -> [String] {
        switch errors {
        case .array(let items)?:
            return items.map { $0.stringValue ?? ((try? $0.jsonString()) ?? "") }
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
