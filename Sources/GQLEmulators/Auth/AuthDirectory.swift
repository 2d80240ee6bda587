import Foundation
import GQLCore
import GQLCrypto

/// The Auth0 emulator's users and refresh tokens, kept in its data folder as `tenant.json` (rewritten atomically
/// after every change): passwords only as salted scrypt hashes, refresh tokens only as their SHA-256.
struct AuthDirectory: Codable, Sendable {
    /// One user of the database connection.
    struct User: Codable, Sendable {
        /// `auth0|` and 24 hex digits, as Auth0's database users.
        var id: String
        /// Lower-cased, as Auth0 keeps e-mails.
        var email: String
        var connection: String
        var password: PasswordHash
        var emailVerified = false
        /// Set after ``GQLAuthEmulator/Configuration/maxFailedAttempts`` wrong passwords in a row; cleared by a
        /// password change.
        var blocked = false
        var failedAttempts = 0
        /// Blocked by an administrator (the Management API's `blocked: true`) until unblocked the same way; `nil`
        /// (never set, or a `tenant.json` from before) is not blocked.
        var adminBlocked: Bool?
        /// ISO 8601, as Auth0's `created_at` / `updated_at`.
        var createdAt: String
        var updatedAt: String
    }

    /// A salted scrypt hash and the cost it was made at.
    struct PasswordHash: Codable, Sendable {
        var salt: String
        var hash: String
        var cost: Scrypt.Cost

        /// A new hash of `password` under a fresh salt.
        init(_ password: String, cost: Scrypt.Cost) throws {
            let salt = Scrypt.salt()
            self.salt = Base64URL.encode(salt)
            self.hash = Base64URL.encode(try Scrypt.derive(Array(password.utf8), salt: salt, cost: cost))
            self.cost = cost
        }

        /// Whether `password` is the one hashed, compared in constant time.
        func matches(_ password: String) -> Bool {
            guard let salt = Base64URL.decode(salt), let expected = Base64URL.decode(hash),
                let derived = try? Scrypt.derive(Array(password.utf8), salt: salt, cost: cost, length: expected.count)
            else { return false }
            return Bytes.constantTimeEquals(derived, expected)
        }
    }

    /// What a refresh token stands for.
    struct RefreshGrant: Codable, Sendable {
        var userId: String
        var audience: String?
        /// The scope of the sign-in: a refresh may ask for less, never more.
        var scope: String
        /// Every token rotated from one sign-in shares it; reuse of a retired one revokes them all.
        var family: String
        /// Retired by rotation: presenting it again is reuse.
        var retired = false
    }

    /// A change-password request, kept instead of the e-mail Auth0 would send.
    struct ResetEmail: Codable, Sendable, Equatable {
        var email: String
        var connection: String
        var at: String
    }

    var users: [String: User] = [:]
    /// By the hex SHA-256 of the token.
    var refreshTokens: [String: RefreshGrant] = [:]
    var resetEmails: [ResetEmail] = []

    func user(email: String) -> User? {
        let folded = email.lowercased()
        return users.values.first { $0.email == folded }
    }

    /// The key a refresh token is kept under.
    static func tokenKey(_ token: String) -> String { Bytes.hex(SHA256.hash(Array(token.utf8))) }

    /// Revokes every refresh token of `family`.
    mutating func revokeFamily(_ family: String) {
        refreshTokens = refreshTokens.filter { $0.value.family != family }
    }

    static let fileName = "tenant.json"

    /// The directory in `folder`, empty when there is none yet.
    /// - Throws: ``GQLCore/GQLError`` `.decoding` when `tenant.json` is not the emulator's (it is left as it is).
    static func load(from folder: GQLDataFolder) throws -> AuthDirectory {
        try folder.readJSON(AuthDirectory.self, fileName, owner: "auth emulator") ?? AuthDirectory()
    }

    /// Writes the directory to `folder` atomically, readable by its owner only.
    func save(to folder: GQLDataFolder) throws {
        try folder.writeJSON(self, to: Self.fileName, owner: "auth emulator", ownerOnly: true)
    }
}
