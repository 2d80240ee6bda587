import Foundation
import GQLCore
import GQLCrypto

/// Seals and opens the bytes of an encrypted token file (``GQLAuth/Storage/file(_:key:)``) with AES-256-GCM.
///
/// The file (the Auth article has it too):
///
/// | Bytes | Content |
/// |-------|---------|
/// | 0 ..< 7 | `GQLAUTH` |
/// | 7 | format version, 1 |
/// | 8 | key kind: 1 passphrase, 2 raw key |
/// | 9 ..< 25 | salt: 16 random bytes, chosen when the file is first written |
/// | 25 ..< 41 | key check: HKDF-SHA256(key, salt, "gqlauth token file key check"), 16 bytes |
/// | 41 ..< 53 | nonce, fresh random bytes on every write |
/// | then | the tokens' JSON, encrypted with HKDF-SHA256(key, salt, "gqlauth token file encryption") |
/// | last 16 | GCM tag; bytes 0 ..< 41 are its associated data |
///
/// The key is a passphrase through PBKDF2-HMAC-SHA512 (256,000 rounds) over the salt, or the raw 32 bytes; the
/// file's own encryption key and key check come from it through HKDF, so the check says nothing about the key that
/// encrypts. A passphrase is derived once per salt and kept in memory for the next save or load.
final class TokenCipher: Sendable {
    static let magic = Array("GQLAUTH".utf8)
    static let version: UInt8 = 1
    static let saltSize = 16
    static let checkSize = 16
    static let headerSize = magic.count + 2 + saltSize + checkSize

    private enum Kind: UInt8 {
        case passphrase = 1
        case raw = 2
    }

    /// A salt and the key material it gave (`passphrase`: derived; `raw`: the bytes).
    private typealias Derived = (salt: [UInt8], key: [UInt8])

    private let key: GQLAuth.FileKey
    /// The salt of the file last read or written, and its key material.
    private let derived = GQLLocked<Derived?>(nil)

    init(_ key: GQLAuth.FileKey) { self.key = key }

    deinit {
        derived.withLock { state in
            guard var current = state else { return }
            state = nil  // `current` now holds the only reference, so the wipe reaches the bytes themselves
            Self.wipe(&current.key)
        }
    }

    private var kind: Kind {
        switch key {
        case .passphrase: .passphrase
        case .raw: .raw
        }
    }

    /// Whether `bytes` start like an encrypted token file.
    static func isSealed(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// The file's bytes for `plaintext` (the tokens' JSON).
    func seal(_ plaintext: [UInt8]) throws -> [UInt8] {
        let (salt, material) = try derived.withLock { state -> Derived in
            if let state { return state }
            let salt = Scrypt.salt(Self.saltSize)
            let fresh: Derived = (salt, try derive(salt))
            state = fresh
            return fresh
        }
        var keys = try Keys(material, salt: salt)
        defer { keys.wipe() }
        let header = Self.magic + [Self.version, kind.rawValue] + salt + keys.check
        return header + (try AESGCM.seal(plaintext, key: keys.encryption, associatedData: header))
    }

    /// The tokens' JSON in `bytes`, the contents of the token file at `path` (for messages).
    /// - Throws: ``GQLCore/GQLError`` `.notEncrypted` for a plain JSON file, `.wrongKey` when the key does not open
    ///   it, `.corrupt` when it was altered or is not a token file.
    func open(_ bytes: [UInt8], path: String) throws -> [UInt8] {
        guard Self.isSealed(bytes) else {
            if bytes.first == UInt8(ascii: "{") {
                throw GQLError(
                    .notEncrypted,
                    "the token file \(path) is plain JSON, not encrypted: sign in again to replace it with an "
                        + "encrypted one")
            }
            throw GQLError(.corrupt, "the token file \(path) is not an encrypted GQLAuth token file")
        }
        guard bytes.count >= Self.headerSize + AESGCM.overhead else {
            throw GQLError(.corrupt, "the encrypted token file \(path) is cut short")
        }
        guard bytes[Self.magic.count] == Self.version else {
            throw GQLError(
                .corrupt, "the encrypted token file \(path) has format version \(bytes[Self.magic.count]), not 1")
        }
        guard bytes[Self.magic.count + 1] == kind.rawValue else {
            let written = bytes[Self.magic.count + 1] == Kind.raw.rawValue ? "a raw key" : "a passphrase"
            throw GQLError(
                .wrongKey, "the key does not open the token file \(path): it was written with \(written)")
        }
        let saltStart = Self.magic.count + 2
        let salt = Array(bytes[saltStart..<(saltStart + Self.saltSize)])
        let check = Array(bytes[(saltStart + Self.saltSize)..<Self.headerSize])
        let material = try derived.withLock { state -> [UInt8] in
            if let state, state.salt == salt { return state.key }
            return try derive(salt)
        }
        var keys = try Keys(material, salt: salt)
        defer { keys.wipe() }
        guard Bytes.constantTimeEquals(keys.check, check) else {
            throw GQLError(.wrongKey, "the key does not open the token file \(path); the file was not changed")
        }
        let header = Array(bytes[..<Self.headerSize])
        let sealed = Array(bytes[Self.headerSize...])
        guard let plaintext = try AESGCM.open(sealed, key: keys.encryption, associatedData: header) else {
            throw GQLError(
                .corrupt, "the encrypted token file \(path) failed authentication: it was altered or damaged on disk")
        }
        derived.withLock { state in state = (salt, material) }
        return plaintext
    }

    /// The key for `salt`: PBKDF2 of a passphrase, or the raw bytes.
    private func derive(_ salt: [UInt8]) throws -> [UInt8] {
        switch key {
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else { throw GQLError(.invalidArgument, "the token file's passphrase is empty") }
            var bytes = Array(passphrase.utf8)
            defer { Self.wipe(&bytes) }
            return try PBKDF2SHA512.derive(bytes, salt: salt)
        case .raw(let data):
            guard data.count == AESGCM.keySize else {
                throw GQLError(
                    .invalidArgument, "a raw token-file key must be \(AESGCM.keySize) bytes; this one has \(data.count)"
                )
            }
            return Array(data)
        }
    }

    /// The two keys one file uses, from the key and the file's salt.
    private struct Keys {
        var encryption: [UInt8]
        var check: [UInt8]

        init(_ material: [UInt8], salt: [UInt8]) throws {
            encryption = try HKDFSHA256.derive(material, salt: salt, info: Array("gqlauth token file encryption".utf8))
            check = try HKDFSHA256.derive(
                material, salt: salt, info: Array("gqlauth token file key check".utf8), length: TokenCipher.checkSize)
        }

        mutating func wipe() {
            TokenCipher.wipe(&encryption)
            TokenCipher.wipe(&check)
        }
    }

    static func wipe(_ bytes: inout [UInt8]) { Bytes.wipe(&bytes) }
}

/// No children: after the first load or save the cipher holds key material, which `dump` or a mirror of an app's type
/// holding a ``GQLAuth/Storage`` must not show.
extension TokenCipher: CustomReflectable {
    var customMirror: Mirror { Mirror(self, children: [:]) }
}
