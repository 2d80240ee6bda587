import Foundation
import GQLCore

extension GQLAuth {
    /// A signed-in user's tokens, as Auth0's `/oauth/token` gave them. Printing, dumping or logging a value shows
    /// the expiry and which tokens are present, never the tokens.
    public struct Tokens: Codable, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The access token, for the API (`Authorization: Bearer …`).
        public var accessToken: String
        /// The ID token, verified when it arrived; its `sub` is the user id.
        public var idToken: String
        /// The refresh token (`offline_access`), nil when Auth0 gave none.
        public var refreshToken: String?
        /// When the access token expires.
        public var expiresAt: Date
        /// The token type, `Bearer`.
        public var tokenType: String

        public init(
            accessToken: String, idToken: String, refreshToken: String?, expiresAt: Date, tokenType: String = "Bearer"
        ) {
            self.accessToken = accessToken
            self.idToken = idToken
            self.refreshToken = refreshToken
            self.expiresAt = expiresAt
            self.tokenType = tokenType
        }

        public var description: String {
            "Tokens(access: <redacted>, id: <redacted>, refresh: \(refreshToken == nil ? "none" : "<redacted>"), "
                + "expiresAt: \(GQLDate.string(from: expiresAt)))"
        }

        public var debugDescription: String { description }

        public var customMirror: Mirror {
            Mirror(
                self, children: ["expiresAt": expiresAt, "hasRefreshToken": refreshToken != nil], displayStyle: .struct)
        }
    }

    /// Where a ``GQLAuth`` keeps its tokens across launches.
    ///
    /// ```swift
    /// GQLAuth(domain: d, clientId: c, tokens: .file("/path/auth.json"))   // JSON, mode 0600, atomic writes
    /// GQLAuth(domain: d, clientId: c, tokens: .file("/path/auth.tokens", key: .raw(keyData)))   // AES-256-GCM
    /// GQLAuth(domain: d, clientId: c, tokens: .memory)                    // forgotten at exit
    /// GQLAuth(domain: d, clientId: c, tokens: .custom(KeychainStore()))   // your own TokenStore
    /// ```
    /// GQLServices does not depend on GQLStore (the layers keep an app that only talks to services free of
    /// SQLite), so there is no `.database(db)`: a few lines adopting ``GQLAuth/TokenStore`` keep the tokens in a
    /// GQLDatabase table, the Keychain or anywhere else.
    public struct Storage: Sendable {
        let store: any TokenStore

        /// A JSON file at `path`, readable by its owner only (0600), replaced atomically on every change; its
        /// directory is created (0700) when missing.
        public static func file(_ path: String) -> Storage { Storage(store: TokenFile(path: path)) }

        /// The same file, encrypted and authenticated with AES-256-GCM under `key`: the tokens never reach the disk
        /// in clear. A wrong key is ``GQLCore/GQLError/Code/wrongKey`` and an altered file
        /// ``GQLCore/GQLError/Code/corrupt`` (both until the next sign-in replaces the file); the Auth article has
        /// the format. A plain file at `path` (the app used ``file(_:)`` before) is sealed under the key when it is
        /// first loaded, so the user stays signed in and no token stays in clear beside it.
        /// ```swift
        /// GQLAuth(domain: d, clientId: c, tokens: .file(path, key: .passphrase("correct horse")))
        /// ```
        public static func file(_ path: String, key: FileKey) -> Storage {
            Storage(store: TokenFile(path: path, cipher: TokenCipher(key)))
        }

        /// Kept in memory only: a new process starts signed out.
        public static var memory: Storage { Storage(store: MemoryTokenStore()) }

        /// Your own store.
        public static func custom(_ store: some TokenStore) -> Storage { Storage(store: store) }
    }

    /// The key of an encrypted token file (``Storage/file(_:key:)``): a passphrase, stretched with
    /// PBKDF2-HMAC-SHA512, or 32 raw bytes (say, from the platform's keychain) — the same two forms as an encrypted
    /// GQLStore database's key.
    ///
    /// A key never appears in a description, a log line or an error: printing one shows `<redacted>`.
    public enum FileKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// A passphrase; the key is PBKDF2-HMAC-SHA512 of its UTF-8 bytes over the file's random 16-byte salt
        /// (256,000 rounds, SQLCipher 4's default), derived once per salt and kept in memory.
        case passphrase(String)
        /// A 256-bit key.
        case raw(Data)

        public var description: String {
            switch self {
            case .passphrase: "GQLAuth.FileKey.passphrase(<redacted>)"
            case .raw: "GQLAuth.FileKey.raw(<redacted>)"
            }
        }

        public var debugDescription: String { description }

        /// No children, so `dump(key)` and reflection show nothing of the key either.
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
    }

    /// Keeps tokens somewhere: adopt it to store them in the Keychain, a database table or a secrets manager.
    ///
    /// ```swift
    /// final class TableStore: GQLAuth.TokenStore {
    ///     func load() throws -> GQLAuth.Tokens? { … }
    ///     func save(_ tokens: GQLAuth.Tokens?) throws { … }    // nil: delete them
    /// }
    /// ```
    /// Both are called with GQLAuth's own lock released, but never twice at once for one ``GQLAuth``.
    public protocol TokenStore: Sendable {
        /// The stored tokens, or nil when there are none.
        func load() throws -> Tokens?
        /// Replaces the stored tokens; nil deletes them.
        func save(_ tokens: Tokens?) throws
    }
}

/// ``GQLAuth/Storage/memory``.
final class MemoryTokenStore: GQLAuth.TokenStore {
    private let tokens = GQLLocked<GQLAuth.Tokens?>(nil)
    func load() -> GQLAuth.Tokens? { tokens.withLock { $0 } }
    func save(_ tokens: GQLAuth.Tokens?) { self.tokens.withLock { $0 = tokens } }
}
