import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension GQLDatabase {
    /// Opens (creating if needed) the encrypted database at `path`.
    ///
    /// Every page of the file, its WAL and its rollback journal is encrypted and authenticated with AES-256-GCM
    /// (the <doc:Encryption> article has the format); temporary files stay in memory. The key is checked against
    /// the file's first page before SQLite opens it, so a wrong key changes nothing.
    /// ```swift
    /// let db = try GQLDatabase(path: "app.sqlite", key: .passphrase("correct horse"))
    /// let db = try GQLDatabase(path: "app.sqlite", key: .raw(keyData))    // 32 bytes
    /// ```
    /// - Throws: ``GQLError`` `.wrongKey` when the key does not open the file (nothing was written);
    ///   `.notEncrypted` when the file is a plain SQLite database (see ``encrypt(path:to:key:)``); `.corrupt` when
    ///   the first page was altered; `.unsupportedFormat` for a file a development build wrote before the format's
    ///   first release; `.invalidArgument` for a raw key that is not 32 bytes, an empty passphrase, `":memory:"` or a
    ///   URI path.
    public convenience init(path: String, key: Key, configuration: Configuration = Configuration()) throws {
        guard path != ":memory:", !path.hasPrefix("file:"), !path.isEmpty else {
            throw GQLError(
                .invalidArgument, "an encrypted database needs a file path, not '\(path)'", operation: "open")
        }
        if !configuration.readOnly { Self.removeLeftovers(of: path) }
        let cipher = try Self.openingKey(key, path: path)
        try self.init(path: path, cipher: cipher, configuration: configuration)
        Self.settleNewFileSalt(path)
    }

    /// Whether the database is encrypted.
    public var isEncrypted: Bool { cipher.withLock { $0 != nil } }

    /// Re-encrypts every page with `key`, atomically: when it returns only `key` opens the file; when the process
    /// dies during it, only the old key does.
    ///
    /// It writes an encrypted copy beside the file (`<path>-rekey`) while reads go on, then waits for the reads in
    /// progress, renames the copy over the file and reopens the connections. Observers stay installed. No other
    /// process may have the file open meanwhile.
    /// ```swift
    /// try db.rekey(.passphrase("new passphrase"))
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` when the database is not encrypted (use
    ///   ``encrypt(path:to:key:)``) or when called inside one of its own reads; `.nestedWrite` inside one of its
    ///   writes.
    public func rekey(_ key: Key) throws {
        guard isEncrypted else {
            throw GQLError(
                .invalidArgument, "the database at \(path) is not encrypted; use GQLDatabase.encrypt(path:to:key:)",
                operation: "rekey")
        }
        let next = try CipherKey(key, salt: try CipherKey.newSalt())
        let copy = path + "-rekey"
        let path = path
        let configuration = configuration
        let cipher = cipher
        try readers?.suspend()
        defer { readers?.resume() }
        try writer.rebuild(
            prepare: { connection in
                // Every committed page into the file, so the copy below is the whole database and the WAL is empty.
                let busy = try connection.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
                guard busy == .int(0) else {
                    throw GQLError(
                        .sqlite, "the WAL could not be checkpointed: another process is using the database",
                        operation: "rekey")
                }
                Self.removeLeftovers(of: path)
                try connection.execute("VACUUM INTO ?", [next.uri(copy)])
                try Self.synchronize(copy)
            },
            swap: {
                try Self.replace(path, with: copy)
                cipher.withLock { $0 = next }
            },
            open: { session in
                try Connection(
                    path: path, reader: false, configuration: configuration, session: session,
                    cipher: cipher.withLock { $0 })
            })
    }

    /// Writes an encrypted copy of the plain database at `path` to `destination` (which must not exist).
    ///
    /// The copy is written beside `destination` and renamed into place, so `destination` is either absent or
    /// whole. The source is only read.
    /// ```swift
    /// try GQLDatabase.encrypt(path: "plain.sqlite", to: "secret.sqlite", key: .passphrase("correct horse"))
    /// ```
    /// - Throws: ``GQLError`` `.keyRequired` when `path` is already encrypted; `.invalidArgument` when
    ///   `destination` exists; `.io` when `path` is not a database.
    public static func encrypt(path: String, to destination: String, key: Key) throws {
        switch FileHeader.read(path) {
        case .plain: break
        case .encrypted:
            throw GQLError(.keyRequired, "the database at \(path) is already encrypted", operation: "encrypt")
        case .empty, .unknown:
            throw GQLError(.io, "there is no SQLite database at \(path)", operation: "encrypt")
        }
        try refuseExisting(destination, operation: "encrypt")
        let cipher = try CipherKey(key, salt: try CipherKey.newSalt())
        let source = try Connection(path: path, reader: true, configuration: Configuration())
        defer { source.close() }
        // The copy takes the reserved bytes the nonce, tag and key check need.
        source.reserveBytes(CipherKey.reserve)
        // The URI names the key's slot only; the slot must outlive the copy, which opens it (the optimizer may
        // otherwise release `cipher`, and wipe the slot, right after `uri`).
        try withExtendedLifetime(cipher) {
            try copy(from: source, into: cipher.uri(destination + "-encrypting"), to: destination)
        }
    }

    /// Writes a plain copy of the encrypted database at `path` to `destination` (which must not exist).
    ///
    /// The copy keeps SQLite's 32 reserved bytes per page (SQLite cannot drop them in a copy); every SQLite reads
    /// such a file.
    /// ```swift
    /// try GQLDatabase.decrypt(path: "secret.sqlite", to: "plain.sqlite", key: .passphrase("correct horse"))
    /// ```
    /// - Throws: ``GQLError`` `.wrongKey`, `.notEncrypted` or `.corrupt` as ``init(path:key:configuration:)``;
    ///   `.invalidArgument` when `destination` exists.
    public static func decrypt(path: String, to destination: String, key: Key) throws {
        let cipher = try openingKey(key, path: path, mustExist: true)
        try refuseExisting(destination, operation: "decrypt")
        let source = try Connection(path: path, reader: true, configuration: Configuration(), cipher: cipher)
        defer { source.close() }
        try copy(from: source, into: CipherKey.plainURI(destination + "-decrypting"), to: destination)
    }

    // MARK: Internals

    /// The registered key for opening `path`: the salt of an existing file (after checking the key against its
    /// first page), or a new one.
    static func openingKey(_ key: Key, path: String, mustExist: Bool = false) throws -> CipherKey {
        switch try header(path, claimingSaltIfEmpty: !mustExist) {
        case .empty(let salt):
            guard let salt else { throw GQLError(.io, "there is no database at \(path)", operation: "open") }
            return try CipherKey(key, salt: salt)
        case .plain:
            throw GQLError(
                .notEncrypted,
                "the database at \(path) is a plain SQLite file; open it without a key, or encrypt a copy with "
                    + "GQLDatabase.encrypt(path:to:key:)", operation: "open")
        case .unknown:
            throw GQLError(
                .corrupt, "the file at \(path) is neither an encrypted database nor a plain SQLite one",
                operation: "open")
        case .encrypted(let salt):
            let cipher = try CipherKey(key, salt: salt)
            switch cipher.check(path) {
            case .ok: return cipher
            case .wrongKey:
                throw GQLError(
                    .wrongKey, "the key does not open the encrypted database at \(path); the file was not changed",
                    operation: "open")
            case .tampered:
                throw GQLError(
                    .corrupt,
                    "page 1 of the encrypted database file at \(path) failed authentication: it was altered or "
                        + "damaged on disk", operation: "open")
            case .earlierFormat:
                throw GQLError(
                    .unsupportedFormat,
                    "the encrypted database at \(path) is in an earlier, unreleased format (a development build "
                        + "before per-file page keys wrote it); this version cannot read it: decrypt it with the build "
                        + "that wrote it and encrypt the plain copy again; the file was not changed", operation: "open")
            case .unreadable:
                throw GQLError(.io, "cannot read the first page of \(path)", operation: "open")
            }
        }
    }

    /// The salts this process handed to files that did not exist yet, by real path, until their first page is
    /// written: two GQLDatabase opening the same missing file at once take the same salt, so whichever writes page 1
    /// first, the other's key (a passphrase is stretched over the salt) still opens it. Other processes are not
    /// covered (the Encryption article says so).
    private static let newFileSalts = GQLLocked<[String: [UInt8]]>([:])

    /// What the file at `path` is. An empty or missing one comes with the salt it is to take when
    /// `claimingSaltIfEmpty` (the one another opening in this process already took, else a new one), nil otherwise.
    private static func header(_ path: String, claimingSaltIfEmpty: Bool) throws -> OpeningHeader {
        let absolute = realFile(path)
        return try newFileSalts.withLock { salts in
            switch FileHeader.read(path) {
            case .empty:
                guard claimingSaltIfEmpty else { return .empty(salt: nil) }
                if let salt = salts[absolute] { return .empty(salt: salt) }
                let salt = try CipherKey.newSalt()
                salts[absolute] = salt
                return .empty(salt: salt)
            case .plain:
                salts[absolute] = nil
                return .plain
            case .encrypted(let salt):
                salts[absolute] = nil
                return .encrypted(salt: salt)
            case .unknown:
                return .unknown
            }
        }
    }

    /// Forgets the salt handed to the new file at `path` once its first page is on disk (it is read from there on).
    private static func settleNewFileSalt(_ path: String) {
        let absolute = realFile(path)
        newFileSalts.withLock { salts in
            guard salts[absolute] != nil, case .encrypted = FileHeader.read(path) else { return }
            salts[absolute] = nil
        }
    }

    /// The file `path` names, however it is spelled (`x`, `./x`, a symlinked folder): its real path, or, while it
    /// or its folders do not exist yet, the real path of the deepest folder that does and the missing names after it
    /// (so the name stays the same once the folders and the file are created).
    static func realFile(_ path: String) -> String {
        var existing = URL(fileURLWithPath: path).standardizedFileURL
        var missing: [String] = []
        while true {
            if let real = realpath(existing.path, nil) {
                defer { free(real) }
                var url = URL(fileURLWithPath: String(cString: real))
                for name in missing.reversed() { url.appendPathComponent(name) }
                return url.path
            }
            let parent = existing.deletingLastPathComponent()
            guard parent.path != existing.path, !existing.lastPathComponent.isEmpty else {
                return URL(fileURLWithPath: path).standardizedFileURL.path
            }
            missing.append(existing.lastPathComponent)
            existing = parent
        }
    }

    private enum OpeningHeader {
        case empty(salt: [UInt8]?)
        case plain
        case encrypted(salt: [UInt8])
        case unknown
    }

    /// Copies the database `source` reads into the file `uri` names (`<destination>-…`), then renames it to
    /// `destination`.
    private static func copy(from source: Connection, into uri: String, to destination: String) throws {
        let temporary = String(uri.dropFirst("file:".count).prefix { $0 != "?" }).removingPercentEncoding ?? ""
        try? FileManager.default.removeItem(atPath: temporary)
        do {
            try source.execute("VACUUM INTO ?", [uri])
            try synchronize(temporary)
            try replace(destination, with: temporary)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    private static func refuseExisting(_ destination: String, operation: String) throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw GQLError(
                .invalidArgument, "\(destination) already exists; choose a new file", operation: operation)
        }
    }

    /// Removes what an interrupted ``rekey(_:)`` left beside `path` (a partial copy; the file itself is whole).
    static func removeLeftovers(of path: String) {
        for suffix in ["-rekey", "-rekey-journal", "-rekey-wal", "-rekey-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    /// Flushes `path` (a file or a directory) to the disk.
    static func synchronize(_ path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GQLError(.io, "cannot open \(path) to flush it", operation: "rekey")
        }
        defer { try? handle.close() }
        do {
            try handle.synchronize()
        } catch {
            throw GQLError(.io, "cannot flush \(path) to disk: \(error.localizedDescription)", operation: "rekey")
        }
    }

    /// Renames `copy` over `path` (atomic on POSIX) and flushes the directory, so the rename survives a crash.
    static func replace(_ path: String, with copy: String) throws {
        guard rename(copy, path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw GQLError(.io, "cannot rename \(copy) to \(path): \(reason)", operation: "rekey")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try? synchronize(directory)
    }
}
