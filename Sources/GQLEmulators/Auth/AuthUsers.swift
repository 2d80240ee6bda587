import Foundation
import GQLCore
import GQLCrypto

/// The Auth0 emulator's users store: the database connection's users (sign-up, salted scrypt hashes, blocking after
/// wrong passwords or by an administrator), the change-password requests, and the records of the refresh tokens
/// issued, all kept in ``AuthDirectory`` and written to the data folder after every change. Transport-free and
/// token-free: ``AuthGrants`` issues the tokens.
final class AuthUsers: Sendable {
    let configuration: GQLAuthEmulator.Configuration
    let folder: GQLDataFolder
    private let directory: GQLLocked<AuthDirectory>
    /// A hash made once to compare a password with when the user does not exist, so a wrong e-mail takes as long
    /// as a wrong password.
    private let decoy: AuthDirectory.PasswordHash

    init(configuration: GQLAuthEmulator.Configuration, folder: GQLDataFolder) throws {
        self.configuration = configuration
        self.folder = folder
        directory = GQLLocked(try AuthDirectory.load(from: folder))
        decoy = try AuthDirectory.PasswordHash("decoy", cost: configuration.passwordHashCost)
    }

    private var now: Date { configuration.clock() }

    // MARK: - Sign-up and sign-in

    /// `POST /dbconnections/signup`: a new user of the connection; Auth0's answer `{_id, email, email_verified}`.
    func signUp(email rawEmail: String?, password: String?, connection: String?) throws -> GQLValues {
        guard connection == configuration.connection else {
            throw Auth0Error.database("invalid_connection", "Invalid connection")
        }
        guard let rawEmail, let email = Self.normalizedEmail(rawEmail) else {
            throw Auth0Error.database("invalid_parameter", "Invalid email address.", name: "BadRequestError")
        }
        guard let password, !password.isEmpty else {
            throw Auth0Error.database("invalid_parameter", "Missing required parameter: password")
        }
        if let weak = PasswordPolicyCheck(policy: configuration.passwordPolicy).refusal(password) {
            throw Auth0Error(status: .badRequest, body: weak)
        }
        guard directory.withLock({ $0.user(email: email) }) == nil else { throw Self.invalidSignUp }
        let hash = try Self.hash(password, cost: configuration.passwordHashCost)
        let hex = Bytes.hex(Scrypt.salt(12))
        let stamp = GQLDate.string(from: now)
        let user = AuthDirectory.User(
            id: "auth0|" + hex, email: email, connection: configuration.connection, password: hash, createdAt: stamp,
            updatedAt: stamp)
        try change { directory throws in
            // Checked again: another sign-up of the same e-mail may have finished while this one hashed.
            guard directory.user(email: email) == nil else { throw Self.invalidSignUp }
            directory.users[user.id] = user
        }
        return ["_id": .string(hex), "email": .string(email), "email_verified": false]
    }

    /// Auth0 answers the same for an existing e-mail as for other refused sign-ups (no user enumeration).
    static let invalidSignUp = Auth0Error.database("invalid_signup", "Invalid sign up")

    /// The user `email` and `password` name, for a password grant. A wrong password counts against the user, who is
    /// blocked after ``GQLAuthEmulator/Configuration/maxFailedAttempts`` in a row (then every attempt is refused,
    /// the right one too, until the password changes); a right one resets the count.
    func authenticate(email: String, password: String) throws -> AuthDirectory.User {
        let found = directory.withLock { $0.user(email: email) }
        guard let user = found else {
            _ = decoy.matches(password)
            throw Auth0Error.wrongCredentials
        }
        if user.blocked { throw Self.tooManyAttempts }
        guard user.password.matches(password) else {
            // This attempt is only wrong; once the user is blocked, the next ones are refused, the right one too.
            try change { directory throws in
                guard var current = directory.users[user.id] else { return }
                current.failedAttempts += 1
                if current.failedAttempts >= configuration.maxFailedAttempts { current.blocked = true }
                directory.users[user.id] = current
            }
            throw Auth0Error.wrongCredentials
        }
        // Checked again now that the hash is done: wrong attempts that ran alongside may have blocked the user.
        guard let current = directory.withLock({ $0.users[user.id] }) else { throw Auth0Error.wrongCredentials }
        if current.blocked { throw Self.tooManyAttempts }
        if current.adminBlocked == true { throw Self.userBlocked }
        if current.failedAttempts > 0 {
            try change { directory throws in
                guard directory.users[user.id]?.blocked == false else { throw Self.tooManyAttempts }
                directory.users[user.id]?.failedAttempts = 0
            }
        }
        return current
    }

    /// Auth0's answer to the right password of a user an administrator blocked.
    static let userBlocked = Auth0Error.oauth(.unauthorized, "unauthorized", "user is blocked")

    static let tooManyAttempts = Auth0Error.oauth(
        .tooManyRequests, "too_many_attempts",
        "Your account has been blocked after multiple consecutive login attempts. Change the password to unblock it.")

    /// The user with `id`, if any.
    func user(id: String) -> AuthDirectory.User? { directory.withLock { $0.users[id] } }

    // MARK: - Refresh-token records

    /// Keeps the record of a new refresh token (by its SHA-256, never the token).
    func keepRefreshToken(_ token: String, _ grant: AuthDirectory.RefreshGrant) throws {
        try change { directory throws in directory.refreshTokens[AuthDirectory.tokenKey(token)] = grant }
    }

    /// The record of the refresh token kept under `tokenKey` and its user, for a refresh. A retired (rotated) token
    /// presented again revokes every token of its sign-in; a blocked user's tokens give nothing.
    func redeemRefreshToken(_ tokenKey: String) throws -> (AuthDirectory.RefreshGrant, AuthDirectory.User) {
        try change { directory throws -> (AuthDirectory.RefreshGrant, AuthDirectory.User) in
            guard let grant = directory.refreshTokens[tokenKey] else { throw Auth0Error.badRefreshToken }
            if grant.retired {
                // A rotated token presented again: whoever holds it may have stolen it; the sign-in ends.
                directory.revokeFamily(grant.family)
                throw Auth0Error.badRefreshToken
            }
            guard let user = directory.users[grant.userId], !user.blocked, user.adminBlocked != true else {
                throw Auth0Error.badRefreshToken
            }
            return (grant, user)
        }
    }

    /// Retires the refresh token kept under `oldKey` and keeps `newToken` in its family (rotation). A refresh that
    /// raced this one and retired it first is reuse: the family is revoked.
    func rotateRefreshToken(_ oldKey: String, _ old: AuthDirectory.RefreshGrant, to newToken: String) throws {
        var grant = old
        grant.retired = false
        try change { directory throws in
            guard directory.refreshTokens[oldKey]?.retired == false else {
                directory.revokeFamily(old.family)
                throw Auth0Error.badRefreshToken
            }
            directory.refreshTokens[oldKey]?.retired = true
            directory.refreshTokens[AuthDirectory.tokenKey(newToken)] = grant
        }
    }

    /// `POST /oauth/revoke`: the refresh token and every token rotated from its sign-in stop working. An unknown
    /// token is not an error (RFC 7009 §2.2).
    func revoke(token: String?) throws {
        guard let token, !token.isEmpty else {
            throw Auth0Error.oauth(.badRequest, "invalid_request", "Missing required parameter: token")
        }
        try change { directory throws in
            if let grant = directory.refreshTokens[AuthDirectory.tokenKey(token)] {
                directory.revokeFamily(grant.family)
            }
        }
    }

    /// How many refresh tokens are live (for tests).
    var liveRefreshTokenCount: Int { directory.withLock { $0.refreshTokens.values.filter { !$0.retired }.count } }

    // MARK: - Passwords and the Management API

    /// `POST /dbconnections/change_password`: Auth0 e-mails a reset link; the emulator records the request
    /// (``resetEmails``). Known and unknown e-mails are answered alike.
    func changePassword(email: String?, connection: String?) throws {
        guard let email, !email.isEmpty else {
            throw Auth0Error.database("invalid_request", "Missing required parameter: email")
        }
        guard connection == configuration.connection else {
            throw Auth0Error.database("invalid_connection", "Invalid connection")
        }
        let entry = AuthDirectory.ResetEmail(
            email: email.lowercased(), connection: configuration.connection, at: GQLDate.string(from: now))
        try change { directory throws in
            directory.resetEmails.append(entry)
            if directory.resetEmails.count > 1000 { directory.resetEmails.removeFirst() }
        }
    }

    /// The change-password requests received, oldest first.
    var resetEmails: [AuthDirectory.ResetEmail] { directory.withLock { $0.resetEmails } }

    /// The Management API's `PATCH /api/v2/users/{id}`: a new `password` (which also lifts a brute-force block)
    /// and/or `blocked`, an administrator's block. The user as the Management API shows one.
    func updateUser(userId: String, password: String?, blocked: Bool?) throws -> GQLValues {
        guard password != nil || blocked != nil else {
            throw Auth0Error.management(
                .badRequest, "Payload validation error: 'Too few properties defined (0), minimum 1'.",
                errorCode: "invalid_body")
        }
        if let password {
            guard !password.isEmpty, PasswordPolicyCheck(policy: configuration.passwordPolicy).refusal(password) == nil
            else {
                throw Auth0Error.management(
                    .badRequest, "PasswordStrengthError: Password is too weak", errorCode: "invalid_body")
            }
        }
        guard user(id: userId) != nil else { throw Self.noSuchUser }
        let hash = try password.map { try Self.hash($0, cost: configuration.passwordHashCost) }
        let stamp = GQLDate.string(from: now)
        let user = try change { directory throws -> AuthDirectory.User in
            guard var user = directory.users[userId] else { throw Self.noSuchUser }
            if let hash {
                user.password = hash
                user.blocked = false
                user.failedAttempts = 0
            }
            if let blocked { user.adminBlocked = blocked }
            user.updatedAt = stamp
            directory.users[userId] = user
            return user
        }
        return Self.managementView(user)
    }

    private static let noSuchUser = Auth0Error.management(
        .notFound, "The user does not exist.", errorCode: "inexistent_user")

    /// A user as the Management API shows one.
    static func managementView(_ user: AuthDirectory.User) -> GQLValues {
        [
            "user_id": .string(user.id), "email": .string(user.email), "email_verified": .bool(user.emailVerified),
            "created_at": .string(user.createdAt), "updated_at": .string(user.updatedAt),
            "name": .string(user.email), "nickname": .string(String(user.email.prefix { $0 != "@" })),
            "blocked": .bool(user.adminBlocked == true),
            "identities": [
                [
                    "connection": .string(user.connection), "provider": "auth0",
                    "user_id": .string(String(user.id.dropFirst("auth0|".count))), "isSocial": false,
                ]
            ],
        ]
    }

    // MARK: - Helpers

    /// Applies `body` to the directory and writes it to the data folder, under the lock (so the file follows the
    /// changes in order), also when `body` throws after changing something (a revoked family); a failed write is a
    /// server error, and the change is kept in memory.
    private func change<T>(_ body: (inout AuthDirectory) throws -> T) throws -> T {
        try directory.withLock { directory in
            let outcome = Result { try body(&directory) }
            do {
                try directory.save(to: folder)
            } catch {
                throw AuthTenant.serverError
            }
            return try outcome.get()
        }
    }

    /// A new salted hash of `password`; a failure of libcrypto is a server error.
    private static func hash(_ password: String, cost: Scrypt.Cost) throws -> AuthDirectory.PasswordHash {
        do {
            return try AuthDirectory.PasswordHash(password, cost: cost)
        } catch {
            throw AuthTenant.serverError
        }
    }

    /// An e-mail as Auth0 keeps it (lower case), or nil when it is not one: one `@`, something on each side, no
    /// spaces or control characters, at most 254 characters.
    static func normalizedEmail(_ text: String) -> String? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { return nil }
        return text.lowercased()
    }
}
