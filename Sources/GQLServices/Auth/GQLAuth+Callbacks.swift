import Foundation
import GQLCore

/// The original library's forms, as thin adapters over the async methods: completion handlers on an instance,
/// and `GQLAuth.setup(…)` once, then static calls on the shared instance. Handlers run on a task of the
/// cooperative pool, not on the main thread.
extension GQLAuth {
    // MARK: - On an instance

    /// ``signUp(email:password:)``; `completion` gets nil or the error.
    public func signUp(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await self.signUp(email: email, password: password) }
    }

    /// ``signIn(email:password:)``; `completion` gets nil or the error.
    ///
    /// ```swift
    /// auth.signIn(email: email, password: password) { error in if let error { show(error) } }
    /// ```
    public func signIn(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await self.signIn(email: email, password: password) }
    }

    /// ``signOut()``: the tokens are forgotten before it returns; `completion` runs after the revocation.
    public func signOut(completion: @escaping @Sendable () -> Void) {
        let old = forget()
        Task {
            await revoke(old)
            completion()
        }
    }

    /// ``checkPassword(password:)``; `completion` gets nil when the password is right.
    public func checkPassword(password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await self.checkPassword(password: password) }
    }

    /// ``updatePassword(password:)``; `completion` gets what was done, or the error.
    public func updatePassword(
        password: String, completion: @escaping @Sendable (PasswordUpdate?, (any Error)?) -> Void
    ) {
        CompletionBridge.start(completion) { try await self.updatePassword(password: password) }
    }

    /// ``accessToken(forceRefresh:)``; `completion` gets the token or the error.
    public func accessToken(completion: @escaping @Sendable (String?, (any Error)?) -> Void) {
        CompletionBridge.start(completion) { try await self.accessToken() }
    }

    // MARK: - The shared instance

    private static let sharedInstance = GQLLocked<GQLAuth?>(nil)
    private static var notSetUp: GQLError {
        GQLError(.invalidArgument, "call GQLAuth.setup(domain, clientId, clientSecret) first")
    }

    /// The instance ``setup(_:_:_:tokens:baseURL:)`` made, nil before.
    public static var shared: GQLAuth? { sharedInstance.withLock { $0 } }

    /// Sets up the shared instance the static forms use (the original's `GQLAuth.setup(domain, clientId,
    /// clientSecret)`); calling it again replaces it.
    ///
    /// ```swift
    /// GQLAuth.setup("tenant.auth0.com", "client-id", nil, tokens: .file(tokenPath))
    /// GQLAuth.signIn(email: email, password: password) { error in … }
    /// ```
    public static func setup(
        _ domain: String, _ clientId: String, _ clientSecret: String? = nil, tokens: Storage = .memory,
        baseURL: String? = nil
    ) {
        let auth = GQLAuth(
            domain: domain, clientId: clientId, clientSecret: clientSecret, tokens: tokens, baseURL: baseURL)
        sharedInstance.withLock { $0 = auth }
    }

    /// ``signUp(email:password:)`` on the shared instance.
    public static func signUp(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let auth = shared else { return completion(notSetUp) }
        auth.signUp(email: email, password: password, completion: completion)
    }

    /// ``signIn(email:password:)`` on the shared instance.
    ///
    /// ```swift
    /// GQLAuth.signIn(email: email, password: password) { error in if let error { show(error) } }
    /// ```
    public static func signIn(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let auth = shared else { return completion(notSetUp) }
        auth.signIn(email: email, password: password, completion: completion)
    }

    /// ``signOut()`` on the shared instance: the tokens are forgotten before it returns, the revocation follows.
    public static func signOut(completion: (@Sendable () -> Void)? = nil) {
        guard let auth = shared else {
            completion?()
            return
        }
        auth.signOut { completion?() }
    }

    /// ``checkPassword(password:)`` on the shared instance; nil means the password is right.
    public static func checkPassword(password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let auth = shared else { return completion(notSetUp) }
        auth.checkPassword(password: password, completion: completion)
    }

    /// ``updatePassword(password:)`` on the shared instance.
    public static func updatePassword(
        password: String, completion: @escaping @Sendable (PasswordUpdate?, (any Error)?) -> Void
    ) {
        guard let auth = shared else { return completion(nil, notSetUp) }
        auth.updatePassword(password: password, completion: completion)
    }

    /// The shared instance's ``userId()``, nil before setup or when signed out.
    public static func userId() -> String? { shared?.userId() }

    /// ``accessToken(forceRefresh:)`` on the shared instance.
    public static func accessToken(completion: @escaping @Sendable (String?, (any Error)?) -> Void) {
        guard let auth = shared else { return completion(nil, notSetUp) }
        auth.accessToken(completion: completion)
    }
}
