import Foundation
import GQLCore

extension GQLDatabase {
    /// The key of an encrypted database: a passphrase, stretched with PBKDF2-HMAC-SHA512, or 32 raw bytes.
    ///
    /// A key never appears in a description, a log line or an error: printing one shows `<redacted>`.
    /// ```swift
    /// let db = try GQLDatabase(path: "app.sqlite", key: .passphrase("correct horse"))
    /// let db = try GQLDatabase(path: "app.sqlite", key: .raw(keyData))   // exactly 32 bytes, used as is
    /// ```
    public enum Key: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// A passphrase; the AES key is PBKDF2-HMAC-SHA512 of its UTF-8 bytes over the file's random 16-byte salt
        /// (``GQLDatabase/Key/passphraseIterations`` rounds), paid once per open.
        case passphrase(String)
        /// A 256-bit key used as is (say, one kept in the platform's keychain).
        case raw(Data)

        /// PBKDF2 rounds for a passphrase: SQLCipher 4's default for the same function.
        public static let passphraseIterations = 256_000

        public var description: String {
            switch self {
            case .passphrase: "GQLDatabase.Key.passphrase(<redacted>)"
            case .raw: "GQLDatabase.Key.raw(<redacted>)"
            }
        }

        public var debugDescription: String { description }

        /// No children, so `dump(key)` and reflection show nothing of the key either.
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }
    }
}
