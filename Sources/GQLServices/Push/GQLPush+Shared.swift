import Foundation
import GQLCore

/// The original toolkit's static form: `GQLPush.setup(appId, keyAPI)` once, then the calls on a shared instance.
extension GQLPush {
    private static let sharedInstance = GQLLocked<GQLPush?>(nil)
    private static let log = GQLDebug.logger("GQLPush")

    /// Sets up the shared instance the static methods use (replacing an earlier one).
    ///
    /// ```swift
    /// GQLPush.setup("onesignal-app-id", "rest-api-key")
    /// ```
    /// The key's form decides its kind and so the API (``KeyKind/of(_:)``) unless `keyKind` says it.
    public static func setup(_ appId: String, _ keyAPI: String, baseURL: String? = nil, keyKind: KeyKind? = nil) {
        let push = GQLPush(appId: appId, restKey: keyAPI, keyKind: keyKind, baseURL: baseURL)
        sharedInstance.withLock { $0 = push }
    }

    /// The setup of earlier versions, whose flag turned the v1 identity hash on (now always sent with a legacy key).
    @available(*, deprecated, message: "the v1 identity hash is always sent with a legacy key; drop the argument")
    public static func setup(_ appId: String, _ keyAPI: String, baseURL: String? = nil, identityVerification: Bool) {
        setup(appId, keyAPI, baseURL: baseURL)
    }

    /// The instance ``setup(_:_:baseURL:keyKind:)`` made, if any.
    public static var shared: GQLPush? { sharedInstance.withLock { $0 } }

    /// Registers the device token with the shared instance in the background and returns it as hex.
    ///
    /// ```swift
    /// func application(_ app: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken token: Data) {
    ///     GQLPush.token(token)
    /// }
    /// ```
    /// A ``register(_:identityToken:)`` called next waits for the registration. A failure is logged
    /// (``GQLCore/GQLDebug`` `.error`) and thrown by the next ``register(_:identityToken:)``; use the instance's
    /// `token(_:)` or the completion form to
    /// see it directly.
    @discardableResult
    public static func token(_ deviceToken: Data) -> String {
        if let push = shared {
            do {
                let task = try push.startRegistration(deviceToken)
                Task {
                    if case .failure(let error) = await task.result {
                        log.error("GQLPush could not register the device: \(error)")
                    }
                }
            } catch {
                log.error("GQLPush could not register the device: \(error)")
            }
        } else {
            log.error("GQLPush.token was called before GQLPush.setup")
        }
        return hex(deviceToken)
    }

    /// ``register(_:identityToken:)`` on the shared instance.
    ///
    /// ```swift
    /// try await GQLPush.register(userId)
    /// ```
    public static func register(_ userId: String, identityToken: String? = nil) async throws {
        try await requireShared("register").register(userId, identityToken: identityToken)
    }

    /// ``unregister()`` on the shared instance.
    public static func unregister() async throws {
        try await requireShared("unregister").unregister()
    }

    /// ``send(chatId:userIds:text:)`` on the shared instance.
    ///
    /// ```swift
    /// try await GQLPush.send(chatId: "c42", userIds: ["u2"], text: "Hello")
    /// ```
    @discardableResult
    public static func send(chatId: String, userIds: [String], text: String) async throws -> Notification {
        try await requireShared("send").send(chatId: chatId, userIds: userIds, text: text)
    }

    static func requireShared(_ operation: String) throws -> GQLPush {
        guard let push = shared else {
            throw GQLError(.invalidArgument, "GQLPush.setup(appId, keyAPI) was not called", operation: operation)
        }
        return push
    }
}
