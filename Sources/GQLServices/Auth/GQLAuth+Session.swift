import Foundation
import GQLCore

extension GQLAuth {
    /// The OAuth grant Auth0 signs database users in with: the resource-owner password grant with a realm.
    static let passwordRealmGrant = "http://auth0.com/oauth/grant-type/password-realm"

    /// What ``updatePassword(password:)`` did.
    public enum PasswordUpdate: Sendable, Equatable {
        /// The password was replaced through the Management API.
        case changed
        /// Auth0 sent the user its reset e-mail (no client secret to use the Management API).
        case emailSent
    }

    /// Creates the user in the database connection (`POST /dbconnections/signup`), then signs in.
    ///
    /// ```swift
    /// try await auth.signUp(email: "ann@example.com", password: "correct horse battery staple")
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.userExists`, `.passwordTooWeak`, `.tooManyAttempts`; `.http` with Auth0's
    ///   code for other refusals; the network errors.
    public func signUp(email: String, password: String) async throws {
        do {
            try await rest.invoke(
                .post, "dbconnections/signup",
                json: [
                    "client_id": .string(clientId), "email": .string(email), "password": .string(password),
                    "connection": .string(connection),
                ])
        } catch {
            throw Auth0Failure.map(error, .signUp)
        }
        try await signIn(email: email, password: password)
    }

    /// Signs in with the password-realm grant (scope `openid profile email offline_access`), verifies the ID
    /// token and keeps the tokens, replacing any earlier session.
    ///
    /// ```swift
    /// try await auth.signIn(email: "ann@example.com", password: password)
    /// print(auth.userId() ?? "")
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.wrongCredentials`, `.blocked`, `.tooManyAttempts`, `.invalidToken` (an ID
    ///   token that fails verification: nobody is signed in then), the network errors.
    public func signIn(email: String, password: String) async throws {
        var fields = ["username": email, "password": password, "realm": connection, "scope": configuration.scope]
        if let audience = configuration.audience { fields["audience"] = audience }
        let answer = try await tokenRequest(grant: Self.passwordRealmGrant, fields, step: .signIn)
        guard let idToken = answer.idToken else {
            throw GQLError(.invalidResponse, "Auth0's sign-in answer has no ID token (is `openid` in the scope?)")
        }
        let claims = try await verifier.verify(idToken, now: configuration.clock())
        let tokens = Tokens(
            accessToken: answer.accessToken, idToken: idToken, refreshToken: answer.refreshToken,
            expiresAt: answer.expiresAt, tokenType: answer.tokenType)
        try keep(tokens, claims: claims, newSession: true)
    }

    /// Signs out: forgets the tokens (memory and store) at once, then revokes the refresh token at Auth0
    /// (`POST /oauth/revoke`). A failed revocation is logged, not thrown: the user is signed out here either way.
    ///
    /// ```swift
    /// await auth.signOut()
    /// ```
    public func signOut() async { await revoke(forget()) }

    /// Revokes the refresh token of `old` at Auth0; failures are logged.
    func revoke(_ old: Tokens?) async {
        guard let refreshToken = old?.refreshToken else { return }
        var body: GQLValues = ["client_id": .string(clientId), "token": .string(refreshToken)]
        if let clientSecret { body["client_secret"] = .string(clientSecret) }
        do {
            try await rest.invoke(.post, "oauth/revoke", json: .object(body))
        } catch {
            logger.error("GQLAuth could not revoke the refresh token: \(error)")
        }
    }

    /// Checks `password` against the signed-in user's account without touching the session (a password-realm
    /// grant with scope `openid` only, so no refresh token is made).
    ///
    /// ```swift
    /// do { try await auth.checkPassword(password: typed) } catch GQLError.Code.wrongCredentials { … }
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.wrongCredentials` for a wrong password, `.signedOut` when nobody is signed
    ///   in (or the ID token carries no e-mail), and the errors of ``signIn(email:password:)``.
    public func checkPassword(password: String) async throws {
        guard let email = email(), let userId = userId() else {
            throw GQLError(.signedOut, "checkPassword needs a signed-in user with an e-mail in the ID token")
        }
        let answer = try await tokenRequest(
            grant: Self.passwordRealmGrant,
            ["username": email, "password": password, "realm": connection, "scope": "openid"], step: .checkPassword)
        guard let idToken = answer.idToken else { return }
        let claims = try await verifier.verify(idToken, now: configuration.clock())
        guard claims["sub"]?.stringValue == userId else {
            throw GQLError(.wrongCredentials, "the password check signed in another user than the current one")
        }
    }

    /// Sets a new password. With a client secret (a trusted environment only), through the Management API: a
    /// `client_credentials` token for `https://<domain>/api/v2/`, then `PATCH /api/v2/users/{id}`. Without one,
    /// Auth0 e-mails the user a reset link (`POST /dbconnections/change_password`) and `password` is not used.
    ///
    /// ```swift
    /// switch try await auth.updatePassword(password: newPassword) {
    /// case .changed: print("changed")
    /// case .emailSent: print("check your inbox")
    /// }
    /// ```
    /// - Throws: ``GQLCore/GQLError`` `.signedOut` when nobody is signed in, `.passwordTooWeak`, `.http` with
    ///   Auth0's code (a client without Management API access gets `access_denied`), the network errors.
    @discardableResult
    public func updatePassword(password: String) async throws -> PasswordUpdate {
        guard let userId = userId() else { throw GQLError(.signedOut, "updatePassword needs a signed-in user") }
        guard clientSecret != nil else {
            guard let email = email() else {
                throw GQLError(
                    .signedOut, "updatePassword needs the user's e-mail in the ID token to send the reset e-mail")
            }
            do {
                try await rest.invoke(
                    .post, "dbconnections/change_password",
                    json: ["client_id": .string(clientId), "email": .string(email), "connection": .string(connection)])
            } catch let error as GQLError where error.code == .invalidResponse {
                // Auth0 answers 200 with a plain-text sentence, not JSON: a success.
            } catch {
                throw Auth0Failure.map(error, .updatePassword)
            }
            return .emailSent
        }
        let management = try await tokenRequest(
            grant: "client_credentials", ["audience": "https://\(domain)/api/v2/"], step: .updatePassword)
        do {
            try await rest.invoke(
                .patch, "api/v2/users/" + GQLREST.percentEncoded(userId),
                json: ["password": .string(password), "connection": .string(connection)],
                headers: ["Authorization": "Bearer " + management.accessToken])
        } catch {
            throw Auth0Failure.map(error, .updatePassword)
        }
        return .changed
    }
}
