import Foundation
import GQLCore
import GQLTestSupport
import Testing

@testable import GQLServices

/// GQLAuth's encrypted token file (`.file(path, key:)`): no token in the file's bytes, reopened with its key, a plain
/// file sealed when a key first opens it, and exact refusals — a wrong key, an altered file, an encrypted file opened
/// without a key.
@Suite struct TokenFileEncryptionTests {
    static let key = GQLAuth.FileKey.raw(Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }))
    static let otherKey = GQLAuth.FileKey.raw(Data(repeating: 7, count: 32))

    static let tokens = GQLAuth.Tokens(
        accessToken: "at-SECRET-ACCESS-0001", idToken: "id-SECRET-IDENTITY-0002",
        refreshToken: "rt-SECRET-REFRESH-0003", expiresAt: Date(timeIntervalSince1970: 2_000_000_000))

    @Test func aSignedInUsersTokensAreNeverInClearAndReopenWithTheKey() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.tokens").path
        let key = GQLAuth.FileKey.passphrase("correct horse battery staple")
        try await AuthTenant.with { tenant in
            let first = try await tenant.signedIn(tokens: .file(path, key: key))
            let token = try await first.accessToken()
            let userId = first.userId()
            try await first.shutdown()
            let stored = try #require(try GQLAuth.Storage.file(path, key: key).store.load())
            #expect(stored.accessToken == token)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in [stored.accessToken, stored.idToken, stored.refreshToken ?? "", "accessToken", "Bearer"] {
                #expect(!secret.isEmpty)
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "'\(secret)' is in the file's bytes")
            }
            #expect(try Self.mode(path) == 0o600)

            // A new process with the key: the same user and token, no request to the tenant.
            let grants = try await tenant.stats()
            let second = tenant.auth(tokens: .file(path, key: key))
            #expect(second.userId() == userId)
            #expect(try await second.accessToken() == token)
            #expect(try await tenant.stats() == grants)

            // A wrong key and no key: signed out with the exact error, the file untouched.
            let wrong = tenant.auth(tokens: .file(path, key: .passphrase("not the passphrase")))
            #expect(!wrong.isSignedIn)
            await expectAuthError(.wrongKey) { _ = try await wrong.accessToken() }
            let keyless = tenant.auth(tokens: .file(path))
            await expectAuthError(.keyRequired) { _ = try await keyless.accessToken() }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

            await second.signOut()
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
            for auth in [second, wrong, keyless] { try await auth.shutdown() }
        }
    }

    @Test func everyWriteIsSealedAfreshAndReplacesTheFileWhole() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.tokens").path
        let store = GQLAuth.Storage.file(path, key: Self.key).store
        var seen: [Data] = []
        for index in 0..<3 {
            var tokens = Self.tokens
            tokens.accessToken += "-\(index)"
            try store.save(tokens)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data("SECRET".utf8)) == nil)
            #expect(bytes.prefix(7) == Data("GQLAUTH".utf8))
            seen.append(bytes)
            // Another store with the same key (a new process) reads what this one wrote.
            #expect(try GQLAuth.Storage.file(path, key: Self.key).store.load() == tokens)
        }
        // The salt (bytes 9..<25) stays with the file; the nonce (41..<53) is new on every write.
        #expect(Set(seen.map { $0[9..<25] }).count == 1)
        #expect(Set(seen.map { $0[41..<53] }).count == 3)
        // Every write renamed its temporary file over the old one.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["auth.tokens"])
        #expect(try Self.mode(path) == 0o600)
    }

    @Test func anAlteredFileIsCorruptAndAWrongKeyIsWrongKey() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.tokens").path
        try GQLAuth.Storage.file(path, key: Self.key).store.save(Self.tokens)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        // One bit flipped in the nonce, the ciphertext or the tag: authentication fails, nothing is returned.
        for offset in [45, 60, original.count / 2, original.count - 1] {
            var altered = original
            altered[offset] ^= 0x01
            try altered.write(to: URL(fileURLWithPath: path))
            Self.expectError(.corrupt, "byte \(offset)") { try GQLAuth.Storage.file(path, key: Self.key).store.load() }
        }
        // Cut short, and a format version this code does not know.
        try original.prefix(40).write(to: URL(fileURLWithPath: path))
        Self.expectError(.corrupt, "cut short") { try GQLAuth.Storage.file(path, key: Self.key).store.load() }
        var future = original
        future[7] = 2
        try future.write(to: URL(fileURLWithPath: path))
        Self.expectError(.corrupt, "version 2") { try GQLAuth.Storage.file(path, key: Self.key).store.load() }

        // The intact file: another raw key, or a passphrase where a raw key wrote it, is a wrong key.
        try original.write(to: URL(fileURLWithPath: path))
        Self.expectError(.wrongKey, "other key") { try GQLAuth.Storage.file(path, key: Self.otherKey).store.load() }
        Self.expectError(.wrongKey, "passphrase") {
            try GQLAuth.Storage.file(path, key: .passphrase("correct horse")).store.load()
        }
        Self.expectError(.keyRequired, "no key") { try GQLAuth.Storage.file(path).store.load() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
        #expect(try GQLAuth.Storage.file(path, key: Self.key).store.load() == Self.tokens)
    }

    /// An app that kept its tokens in a plain file and now passes a key: the first load seals them in place (the user
    /// stays signed in), and no file in the folder holds a token in clear — neither the old file nor what a plain
    /// save killed before its rename left beside it.
    @Test func aPlainFileIsSealedWhenAKeyFirstOpensItAndNoPlaintextRemains() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.json").path
        try GQLAuth.Storage.file(path).store.save(Self.tokens)
        let plain = try Data(contentsOf: URL(fileURLWithPath: path))
        // A killed save's temporary file: `<name>.<pid>.<n>.tmp`, its process gone (no pid reaches 2^22 on Linux).
        let killed = path + ".4194304.77.tmp"
        try plain.write(to: URL(fileURLWithPath: killed))
        // One a killed save left under this process's pid (a restarted container's pid 1 has the same one).
        try plain.write(to: URL(fileURLWithPath: path + ".\(getpid()).7.tmp"))
        // A save in flight holds its temporary locked: left alone whatever its pid says (here one no process has,
        // as a process in another pid namespace sharing the folder looks from here).
        let inFlight = path + ".4194305.78.tmp"
        try Data("sealed bytes".utf8).write(to: URL(fileURLWithPath: inFlight))
        let saving = open(inFlight, O_RDONLY | O_CLOEXEC)
        #expect(saving >= 0 && flock(saving, LOCK_EX) == 0)
        defer { close(saving) }
        // An empty one holds no tokens and may be a save that has not locked it yet: left too.
        let justCreated = path + ".4194306.79.tmp"
        try Data().write(to: URL(fileURLWithPath: justCreated))
        // An empty one over a minute old is a save killed between creating and locking it: removed.
        let killedEarly = path + ".4194307.80.tmp"
        try Data().write(to: URL(fileURLWithPath: killedEarly))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -120)], ofItemAtPath: killedEarly)

        // What GQLAuth(…, tokens: .file(path, key:)) does first.
        #expect(try GQLAuth.Storage.file(path, key: Self.key).store.load() == Self.tokens)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["auth.json", "auth.json.4194305.78.tmp", "auth.json.4194306.79.tmp"])
        for name in names {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            for secret in [Self.tokens.accessToken, Self.tokens.idToken, Self.tokens.refreshToken ?? "", "SECRET"] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "'\(secret)' is in \(name)")
            }
        }
        let sealed = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(sealed.prefix(7) == Data("GQLAUTH".utf8))
        #expect(try Self.mode(path) == 0o600)
        #expect(try GQLAuth.Storage.file(path, key: Self.key).store.load() == Self.tokens)
        Self.expectError(.keyRequired, "no key") { try GQLAuth.Storage.file(path).store.load() }
        Self.expectError(.wrongKey, "other key") { try GQLAuth.Storage.file(path, key: Self.otherKey).store.load() }
    }

    /// Two savers with a key on one file at once (two apps, or two stores in one): each save's cleaning pass sees
    /// the other's temporary while it is being written, and must leave it, since its save still holds it. A removed
    /// one would fail that save's rename. Each thread writes its own tokens; the file ends whole with one of them.
    @Test func keyedSavesAtOnceNeverRemoveEachOthersTemporaries() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.json").path
        let written = (0..<2).map { writer in
            GQLAuth.Tokens(
                accessToken: "at-writer-\(writer)", idToken: "id-writer-\(writer)", refreshToken: nil,
                expiresAt: Date(timeIntervalSince1970: 2_000_000_000))
        }
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for tokens in written {
                group.addTask {
                    await onThread {
                        let store = GQLAuth.Storage.file(path, key: Self.key).store
                        var failures: [String] = []
                        for round in 0..<150 {
                            do { try store.save(tokens) } catch { failures.append("round \(round): \(error)") }
                        }
                        return failures
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.count == 0, "\(failures.count) saves failed, the first: \(failures.prefix(3))")
        let final = try GQLAuth.Storage.file(path, key: Self.key).store.load()
        #expect(final.map(written.contains) == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["auth.json"])
    }

    @Test func aBadKeyIsRefusedWithTheReason() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.json").path
        let short = GQLAuth.Storage.file(path + "2", key: .raw(Data(count: 16))).store
        Self.expectError(.invalidArgument, "16-byte key") { try short.save(Self.tokens) }
        #expect(!FileManager.default.fileExists(atPath: path + "2"))
        let keys = [GQLAuth.FileKey.raw(Data("SECRET-key-SECRET-key-SECRET-key".utf8)), .passphrase("SECRET-phrase")]
        // A storage that has loaded and saved holds key material: a dump of it (or of an app type holding it)
        // shows none of it.
        let used = GQLAuth.Storage.file(path + "3", key: .raw(Data(repeating: 0xA5, count: 32)))
        try used.store.save(Self.tokens)
        #expect(try used.store.load() == Self.tokens)
        var usedDump = ""
        dump(used, to: &usedDump)
        #expect(!usedDump.contains("- 165\n") && !usedDump.contains("32 elements"), "\(usedDump)")
        for key in keys {
            var dumped = ""
            dump(key, to: &dumped)
            #expect(key.description.contains("<redacted>"))
            for text in ["\(key)", String(reflecting: key), dumped] {
                #expect(!text.contains("SECRET"), "\(text)")
            }
        }
    }

    // MARK: Helpers

    static func directory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("gqlauth-enc-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    static func expectError<T>(
        _ code: GQLError.Code, _ label: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> T
    ) {
        do {
            let result = try body()
            Issue.record(
                "\(label): expected GQLError.\(code), got \(String(describing: result))", sourceLocation: sourceLocation
            )
        } catch let error as GQLError {
            #expect(error.code == code, "\(label): \(error)", sourceLocation: sourceLocation)
            #expect(!error.message.contains("SECRET"), sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(label): expected GQLError.\(code), got \(error)", sourceLocation: sourceLocation)
        }
    }
}
