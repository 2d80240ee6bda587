import Foundation
import GQLCore

/// The original library's forms: `GQLAuth.setup(…)` once, then static calls with completion handlers, as thin
/// adapters over a shared instance's async methods. Handlers run on a task of the cooperative pool, not on the
/// main thread.
extension GQLAuth {
    private static let sharedInstance = GQLLocked<GQLAuth?>(nil)

    /// The instance ``setup(_:_:_:tokens:)`` made, nil before.
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
        let auth = GQLAuth(domain: domain, clientId: clientId, clientSecret: clientSecret, tokens: tokens, baseURL: baseURL)
        sharedInstance.withLock { $0 = auth }
    }

    private static func withShared(
        _ completion: @escaping @Sendable ((any Error)?) -> Void, _ body: @escaping @Sendable (GQLAuth) async throws -> Void
    ) {
        guard let auth = shared else {
            completion(GQLError(.invalidArgument, "call GQLAuth.setup(domain, clientId, clientSecret) first"))
            return
        }
        Task {
            do {
                try await body(auth)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// ``signUp(email:password:)`` on the shared instance; `completion` gets nil or the error.
    public static func signUp(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        withShared(completion) { try await $0.signUp(email: email, password: password) }
    }

    /// ``signIn(email:password:)`` on the shared instance.
    ///
    /// ```swift
    /// GQLAuth.signIn(email: email, password: password) { error in if let error { show(error) } }
    /// ```
    public static func signIn(email: String, password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        withShared(completion) { try await $0.signIn(email: email, password: password) }
    }

    /// ``signOut()`` on the shared instance; the tokens are forgotten before it returns, the revocation follows.
    public static func signOut(completion: (@Sendable () -> Void)? = nil) {
        guard let auth = shared else {
            completion?()
            return
        }
        let old = auth.forget()
        Task {
            await auth.revoke(old)
            completion?()
        }
    }

    /// ``checkPassword(password:)`` on the shared instance; nil means the password is right.
    public static func checkPassword(password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        withShared(completion) { try await $0.checkPassword(password: password) }
    }

    /// ``updatePassword(password:)`` on the shared instance.
    public static func updatePassword(password: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        withShared(completion) { try await $0.updatePassword(password: password) }
    }

    /// The shared instance's ``userId()``, nil before setup or when signed out.
    public static func userId() -> String? { shared?.userId() }

    /// ``accessToken(forceRefresh:)`` on the shared instance.
    public static func accessToken(completion: @escaping @Sendable (String?, (any Error)?) -> Void) {
        guard let auth = shared else {
            completion(nil, GQLError(.invalidArgument, "call GQLAuth.setup(domain, clientId, clientSecret) first"))
            return
        }
        Task {
            do { completion(try await auth.accessToken(), nil) } catch { completion(nil, error) }
        }
    }
}
