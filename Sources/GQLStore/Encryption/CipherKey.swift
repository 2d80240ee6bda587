import CStoreCrypt
import Foundation
import GQLCore

/// A key handed to the encrypting VFS: its bytes live in one of the VFS's key slots (C memory, wiped when this is
/// released), and connections name the slot in their URI. Swift keeps only the slot number and the salt.
final class CipherKey: Sendable {
    let slot: Int32
    /// The file id (and passphrase salt) a new file takes.
    let salt: [UInt8]

    static let saltSize = Int(GQLCRYPT_SALT_SIZE)
    static let reserve = Int32(GQLCRYPT_RESERVE)

    /// Derives or checks the key's 32 bytes for `salt` and registers them.
    init(_ key: GQLDatabase.Key, salt: [UInt8]) throws {
        guard gqlcrypt_register() == 0 else {
            throw GQLError(.io, "the encrypting SQLite VFS could not be registered", operation: "open")
        }
        var material = [UInt8](repeating: 0, count: Int(GQLCRYPT_KEY_SIZE))
        defer { material.withUnsafeMutableBytes { gqlcrypt_wipe($0.baseAddress, $0.count) } }
        switch key {
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else { throw GQLError(.invalidArgument, "the passphrase is empty") }
            var bytes = Array(passphrase.utf8)
            defer { bytes.withUnsafeMutableBytes { gqlcrypt_wipe($0.baseAddress, $0.count) } }
            let ok = bytes.withUnsafeBufferPointer { text in
                text.withMemoryRebound(to: CChar.self) { text in
                    gqlcrypt_derive(
                        text.baseAddress, text.count, salt, Int32(GQLDatabase.Key.passphraseIterations), &material)
                }
            }
            guard ok == 1 else { throw GQLError(.crypto, "the passphrase could not be stretched (PBKDF2)") }
        case .raw(let data):
            guard data.count == material.count else {
                throw GQLError(
                    .invalidArgument, "a raw key must be \(material.count) bytes; this one has \(data.count)")
            }
            material.withUnsafeMutableBytes { _ = data.copyBytes(to: $0) }
        }
        let slot = gqlcrypt_key_add(material, salt)
        guard slot > 0 else { throw GQLError(.io, "too many encrypted databases are open at once", operation: "open") }
        self.slot = slot
        self.salt = salt
    }

    deinit { gqlcrypt_key_remove(slot) }

    enum Check { case ok, wrongKey, tampered, earlierFormat, unreadable }

    /// Checks this key against the first page of the encrypted file at `path`; reads only, and leaves the locks of
    /// this process's connections to the file in place (see ``FileHeader/read(_:)``).
    func check(_ path: String) -> Check {
        switch Int(gqlcrypt_check_file(path, slot)) {
        case Int(GQLCRYPT_OK): .ok
        case Int(GQLCRYPT_WRONG_KEY): .wrongKey
        case Int(GQLCRYPT_TAMPERED): .tampered
        case Int(GQLCRYPT_EARLIER_FORMAT): .earlierFormat
        default: .unreadable
        }
    }

    /// A fresh random salt for a new file.
    static func newSalt() throws -> [UInt8] {
        var salt = [UInt8](repeating: 0, count: saltSize)
        guard gqlcrypt_random(&salt, Int32(saltSize)) == 1 else {
            throw GQLError(.crypto, "no random bytes for a new file's salt")
        }
        return salt
    }

    /// The URI that opens `path` through the VFS with this key (the key itself never goes into it).
    func uri(_ path: String) -> String {
        "file:\(Self.escape(path))?vfs=\(String(cString: gqlcrypt_vfs_name()))&gqlkey=\(slot)"
    }

    /// The URI that opens `path` as a plain file through the VFS the encrypting one wraps.
    static func plainURI(_ path: String) -> String {
        "file:\(escape(path))?vfs=\(String(cString: gqlcrypt_base_vfs_name()))"
    }

    private static func escape(_ path: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}

/// What the first bytes of a database file say about it.
enum FileHeader {
    case empty
    case plain
    case encrypted(salt: [UInt8])
    case unknown

    /// What the file at `path` starts with (`.empty` when it is missing or unreadable).
    ///
    /// The bytes are read through SQLite's own VFS, never with a descriptor of our own: on POSIX, closing any
    /// descriptor of a file drops every fcntl lock the process holds on it, so opening a second database (or a
    /// GQLSync, a GQLCache, a reader) on a file a connection of this process has locked would let another process
    /// write under that connection's transaction.
    static func read(_ path: String) -> FileHeader {
        var bytes = [UInt8](repeating: 0, count: 24)
        let count = Int(gqlcrypt_read_header(path, &bytes, Int32(bytes.count)))
        bytes.removeSubrange(count...)
        switch Int(gqlcrypt_header_kind(bytes, Int32(bytes.count))) {
        case Int(GQLCRYPT_HEADER_EMPTY): return .empty
        case Int(GQLCRYPT_HEADER_PLAIN): return .plain
        case Int(GQLCRYPT_HEADER_ENCRYPTED): return .encrypted(salt: Array(bytes.prefix(CipherKey.saltSize)))
        default: return .unknown
        }
    }
}

extension GQLError {
    /// The error for a page the VFS refused on this thread, if the last SQLite failure was one.
    static func pageFailure(sql: String?, table: String?, sqliteCode: Int32) -> GQLError? {
        guard sqliteCode == GQLCRYPT_IOERR_DATA else { return nil }
        var page: UInt32 = 0
        var file: Int32 = 0
        let kind = gqlcrypt_take_failure(&page, &file)
        guard kind != GQLCRYPT_OK else { return nil }
        let name =
            switch file {
            case Int32(GQLCRYPT_FILE_WAL): "WAL file"
            case Int32(GQLCRYPT_FILE_JOURNAL): "rollback journal"
            default: "database file"
            }
        if kind == GQLCRYPT_WRONG_KEY {
            return GQLError(
                .wrongKey,
                "page \(page) of the encrypted \(name) is under another key\(page == 1 ? "" : ", as is page 1"): the "
                    + "file was replaced or rekeyed since the database was opened, and this key does not open it; "
                    + "none of it was read", sql: sql, table: table, sqliteCode: sqliteCode)
        }
        return GQLError(
            .corrupt,
            "page \(page) of the encrypted \(name) failed authentication: it was altered or damaged on disk, "
                + "so none of it was read",
            sql: sql, table: table, sqliteCode: sqliteCode)
    }
}

/// For tests: the nonce one page cipher gives its next page write in this process, and in a child forked from it.
package enum CipherForkProbe {
    /// Nil when the child could not be started or did not answer within 10 s.
    package static func nonces() -> (parent: [UInt8], child: [UInt8])? {
        var parent = [UInt8](repeating: 0, count: 12)
        var child = [UInt8](repeating: 0, count: 12)
        guard gqlcrypt_fork_nonce_probe(&parent, &child) == 1 else { return nil }
        return (parent, child)
    }
}
