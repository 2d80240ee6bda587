import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// ``GQLAuth/Storage/file(_:)``: the tokens as JSON in a file only its owner can read (0600). A write goes to a
/// new file beside it, created 0600 before any byte is written, flushed, then renamed over the old one, so a
/// crash leaves the old tokens or the new ones, never half of either. With a `cipher`
/// (``GQLAuth/Storage/file(_:key:)``) the JSON is sealed with AES-256-GCM before it is written, so it never
/// reaches the disk in clear, and a plain file found at the path (the app used ``GQLAuth/Storage/file(_:)`` before) is
/// sealed on the first load (`sealPlainFile`).
struct TokenFile: GQLAuth.TokenStore {
    let path: String
    var cipher: TokenCipher? = nil

    func load() throws -> GQLAuth.Tokens? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot open the token file", errno)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure("cannot inspect the token file", errno) }
        // A file others may read (copied in, or made by an older tool) is narrowed to its owner.
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) != 0 {
            throw failure("cannot make the token file private (0600)", errno)
        }
        var data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
        guard !data.isEmpty else { return nil }
        if cipher != nil, data.first == UInt8(ascii: "{") {
            defer { data.resetBytes(in: 0..<data.count) }
            return try sealPlainFile(data, descriptor: descriptor)
        }
        if let cipher {
            var plaintext = try cipher.open(Array(data), path: path)
            defer { TokenCipher.wipe(&plaintext) }
            data = Data(plaintext)
        } else if TokenCipher.isSealed(Array(data.prefix(TokenCipher.magic.count))) {
            throw GQLError(
                .keyRequired, "the token file \(path) is encrypted: open it with GQLAuth.Storage.file(_:key:)")
        }
        defer { data.resetBytes(in: 0..<data.count) }
        return try decode(data)
    }

    private func decode(_ json: Data) throws -> GQLAuth.Tokens {
        do {
            return try JSONDecoder.tokens.decode(GQLAuth.Tokens.self, from: json)
        } catch {
            throw GQLError(.decoding, "the token file \(path) is not GQLAuth's JSON (sign in again to replace it)")
        }
    }

    /// A plain token file opened with a key (`descriptor`, its bytes `json`): the tokens are sealed into a new file
    /// renamed over it, so the session goes on and no plaintext stays at the path or beside it. Then the old file's
    /// bytes are overwritten with zeros (best effort: a copy-on-write file system or an SSD may keep the old blocks;
    /// skipped when the file has another name). The save also removes what a killed plain save left beside it.
    private func sealPlainFile(_ json: Data, descriptor: Int32) throws -> GQLAuth.Tokens {
        let tokens = try decode(json)
        var plain = stat()
        guard fstat(descriptor, &plain) == 0 else { throw failure("cannot inspect the token file", errno) }
        // Opened for writing before the rename, and only if it is still the file just read.
        var old = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        var reopened = stat()
        if old >= 0,
            fstat(old, &reopened) != 0 || reopened.st_ino != plain.st_ino || reopened.st_dev != plain.st_dev
                || plain.st_nlink != 1
        {
            close(old)
            old = -1
        }
        defer { if old >= 0 { close(old) } }
        try save(tokens)
        if old >= 0 {
            let zeros = [UInt8](repeating: 0, count: 4096)
            var offset = 0
            while offset < Int(plain.st_size) {
                let count = pwrite(old, zeros, min(zeros.count, Int(plain.st_size) - offset), off_t(offset))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                offset += count
            }
            fsync(old)
        }
        return tokens
    }

    /// Removes the temporary files (`<name>.<pid>.<n>.tmp`) of saves that are no longer running: one a plain save
    /// left when it was killed before its rename holds the tokens in clear. A save holds an exclusive `flock` on its
    /// temporary from before its first byte until after its rename (`save`), so a temporary that has bytes, can be
    /// locked and still has its name is abandoned, whatever pid its name carries: this process's own after a restart
    /// (pid 1 in a container), or a live one in another pid namespace sharing the folder. An empty one holds no
    /// tokens and may be a save that has not locked it yet (a save locks within microseconds of creating it): it
    /// is left unless it is over a minute old, a save killed between creating and locking it.
    private func removeKilledSavesTemporaries() {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let middle = name.dropFirst(prefix.count).dropLast(".tmp".count).split(separator: ".")
            guard middle.count == 2, Int32(middle[0]) != nil, UInt32(middle[1]) != nil else { continue }
            let file = folder + "/" + name
            let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var locked = stat()
            var named = stat()
            // The name is checked again once locked: a save that renamed its temporary away and closed it leaves
            // the lock free, and the name may have been given to another save's file since.
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &locked) == 0,
                (locked.st_mode & S_IFMT) == S_IFREG,
                locked.st_size > 0 || time(nil) - locked.st_mtim.tv_sec > 60, lstat(file, &named) == 0,
                named.st_ino == locked.st_ino, named.st_dev == locked.st_dev
            else { continue }
            unlink(file)
        }
    }

    func save(_ tokens: GQLAuth.Tokens?) throws {
        guard let tokens else {
            guard unlink(path) == 0 || errno == ENOENT else { throw failure("cannot delete the token file", errno) }
            return
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw GQLError(.io, "cannot create the token directory \(directory): \(error.localizedDescription)")
            }
        }
        var data = try JSONEncoder.tokens.encode(tokens)
        if let cipher {
            var json = Array(data)
            defer { TokenCipher.wipe(&json) }
            data.resetBytes(in: 0..<data.count)
            data = Data(try cipher.seal(json))
        }
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create a token file beside", errno) }
        // Held until after the rename: a temporary with bytes that can be locked is a killed save's, which a keyed
        // save removes (removeKilledSavesTemporaries). Only a cleaner that found the file still empty can hold it
        // now, for a moment. Where flock fails (a file system without it), the cleaner cannot lock either and
        // removes nothing.
        while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
        var written = 0
        let ok = data.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            while written < buffer.count {
                let count = write(descriptor, base + written, buffer.count - written)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return fsync(descriptor) == 0
        }
        let code = errno
        guard ok, rename(temporary, path) == 0 else {
            let renameCode = errno
            unlink(temporary)
            close(descriptor)
            throw failure("cannot write the token file", ok ? renameCode : code)
        }
        close(descriptor)
        // The rename itself reaches the disk with the directory.
        let folder = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        if cipher != nil { removeKilledSavesTemporaries() }
    }

    private func failure(_ what: String, _ code: Int32) -> GQLError {
        GQLError(.io, "\(what) \(path): \(String(cString: strerror(code)))")
    }
}

extension JSONEncoder {
    /// Tokens as JSON: ISO 8601 dates, sorted keys (stable files).
    static var tokens: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

extension JSONDecoder {
    static var tokens: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
