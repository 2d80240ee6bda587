import Foundation
import GQLCore

/// Completion-handler forms of ``GQLPush``, on the shared instance (``GQLPush/setup(_:_:baseURL:keyKind:)``)
/// as the original toolkit called them: thin adapters over the async methods. Handlers run on a task of the
/// cooperative pool, not on the main thread.
extension GQLPush {
    /// Registers the device token; `completion` gets its id (subscription or player id) or the error.
    ///
    /// ```swift
    /// GQLPush.token(deviceToken) { playerId, error in … }
    /// ```
    public static func token(
        _ deviceToken: Data, completion: @escaping @Sendable (String?, (any Error)?) -> Void
    ) {
        let task: Task<String, any Error>
        do {
            task = try requireShared("token").startRegistration(deviceToken)
        } catch {
            completion(nil, error)
            return
        }
        CompletionBridge.start(completion) { try await task.value }
    }

    /// ``register(_:identityToken:)``; `completion` gets nil or the error.
    ///
    /// ```swift
    /// GQLPush.register(userId) { error in … }
    /// ```
    public static func register(
        _ userId: String, identityToken: String? = nil, completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionBridge.start(completion) {
            try await requireShared("register").register(userId, identityToken: identityToken)
        }
    }

    /// ``unregister()``; `completion` gets nil or the error.
    public static func unregister(completion: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await requireShared("unregister").unregister() }
    }

    /// ``send(chatId:userIds:text:)``; `completion` gets the notification or the error.
    ///
    /// ```swift
    /// GQLPush.send(chatId: "c42", userIds: ["u2"], text: "Hello") { notification, error in … }
    /// ```
    public static func send(
        chatId: String, userIds: [String], text: String,
        completion: @escaping @Sendable (Notification?, (any Error)?) -> Void
    ) {
        CompletionBridge.start(completion) {
            try await requireShared("send").send(chatId: chatId, userIds: userIds, text: text)
        }
    }
}
