import Foundation
import GQLCore
import GQLStore

/// The encryption step of `gql-cli demo`: the same rows in a plain file and in one opened with a passphrase, the
/// files' bytes searched for a value, a wrong passphrase refused, a rekey to a raw key and a reopen.
///
/// A passphrase costs PBKDF2's 256,000 rounds at every open, so the step pays it twice (the first open and the
/// wrong passphrase) and rekeys to a raw key, which opens at once.
struct DemoEncryptionTour: DemoStep {
    typealias User = DemoCommand.User

    /// Where the two files go; the step prints their names relative to it.
    let directory: URL

    /// A fixed raw key so the tour prints the same every time; an app keeps its own in the platform's keychain.
    private static let rawKey = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
    private static let needle = "John Smith"

    func run() throws {
        heading("7. Encryption at rest (GQLDatabase(path:key:))")
        let plain = directory.appendingPathComponent("plain.sqlite").path
        let secret = directory.appendingPathComponent("secret.sqlite").path
        let users = [
            User(1001, "John Smith", age: 42), User(1002, "Jane Doe", age: 35), User(1003, "Ann Lee", age: 28),
        ]
        for (path, key) in [(plain, nil), (secret, GQLDatabase.Key.passphrase("correct horse battery"))] {
            let db = try key.map { try GQLDatabase(path: path, key: $0) } ?? GQLDatabase(path: path)
            try db.register(User.self)
            try db.write { tx in for user in users { try user.insert(tx) } }
            if key != nil {
                say(
                    "GQLDatabase(path: \"secret.sqlite\", key: .passphrase(\"correct horse battery\")) -> isEncrypted \(db.isEncrypted)"
                )
            }
            try db.close()
        }
        say("the same 3 users (1001 John Smith, …) written to secret.sqlite and to plain.sqlite, opened without a key")
        say("grep \"\(Self.needle)\" plain.sqlite  -> \(try find(Self.needle, in: plain))")
        say(
            "grep \"\(Self.needle)\" secret.sqlite -> \(try find(Self.needle, in: secret)); \"SQLite format 3\" -> \(try find("SQLite format 3", in: secret))"
        )

        do {
            _ = try GQLDatabase(path: secret, key: .passphrase("wrong horse battery"))
            throw CLIError("a wrong passphrase opened \(secret)")
        } catch let error as GQLError where error.code == .wrongKey {
            say(".passphrase(\"wrong horse battery\") -> \(relative(error.description))")
        }

        let db = try GQLDatabase(path: secret, key: .passphrase("correct horse battery"))
        try db.rekey(.raw(Self.rawKey))
        try db.close()
        say("rekey(.raw(key)) -> every page rewritten under a 32-byte key (one that opens without PBKDF2's cost)")
        let reopened = try GQLDatabase(path: secret, key: .raw(Self.rawKey))
        let john = try User.fetchOne(reopened, key: 1001)?.summary ?? "nothing"
        say("reopened with .raw(key) -> count() \(try User.count(reopened)), fetchOne(key: 1001) -> \(john)")
        try reopened.close()
        say("grep \"\(Self.needle)\" secret.sqlite -> \(try find(Self.needle, in: secret))")
    }

    /// Whether the bytes of the database at `path` or its WAL hold `text`, as grep would say.
    private func find(_ text: String, in path: String) throws -> String {
        let needle = Data(text.utf8)
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try CLIError.guarding("cannot read \(file)") {
                try Data(contentsOf: URL(fileURLWithPath: file))
            }
            if bytes.range(of: needle) != nil { return "found" }
        }
        return "not found"
    }

    /// `text` with the temporary folder's path left out, so the output is the same on every run.
    private func relative(_ text: String) -> String {
        text.replacingOccurrences(of: directory.path + "/", with: "")
    }
}
