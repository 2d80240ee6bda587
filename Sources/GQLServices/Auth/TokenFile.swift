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
/// reaches the disk in clear.
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
        if let cipher {
            var plaintext = try cipher.open(Array(data), path: path)
            defer { TokenCipher.wipe(&plaintext) }
            data = Data(plaintext)
        } else if TokenCipher.isSealed(Array(data.prefix(TokenCipher.magic.count))) {
            throw GQLError(
                .keyRequired, "the token file \(path) is encrypted: open it with GQLAuth.Storage.file(_:key:)")
        }
        defer { data.resetBytes(in: 0..<data.count) }
        do {
            return try JSONDecoder.tokens.decode(GQLAuth.Tokens.self, from: data)
        } catch {
            throw GQLError(.decoding, "the token file \(path) is not GQLAuth's JSON (sign in again to replace it)")
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
        close(descriptor)
        guard ok, rename(temporary, path) == 0 else {
            let renameCode = errno
            unlink(temporary)
            throw failure("cannot write the token file", ok ? renameCode : code)
        }
        // The rename itself reaches the disk with the directory.
        let folder = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
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
