import Foundation
import GQLStore
import Testing

/// `gql-cli db … --key-file F` opens encrypted files; rekey, encrypt and decrypt work from the command line; the key
/// never shows in a message.
@Suite(.timeLimit(.minutes(2)))
struct DatabaseKeyTests {
    @Test func keyFileOpensAnEncryptedFileAndItsAbsenceOrAWrongOneSaysWhy() async throws {
        let sample = try SampleDatabase()
        let directory = sample.directory
        let secret = directory.path("secret.sqlite")
        let keyFile = directory.path("app.key")
        let wrongFile = directory.path("wrong.key")
        let newFile = directory.path("new.key")
        try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        try Data("wrong horse\n".utf8).write(to: URL(fileURLWithPath: wrongFile))
        try Data("raw:\(String(repeating: "0f", count: 32))".utf8).write(to: URL(fileURLWithPath: newFile))

        _ = try await CLIProcess.succeed(["db", "encrypt", sample.path, secret, "--key-file", keyFile])
        #expect(try await CLIProcess.succeed(["db", "count", secret, "Person", "--key-file", keyFile]) == "3\n")

        let missing = try await CLIProcess.fail(["db", "count", secret, "Person"])
        #expect(missing.contains("is encrypted"))
        let wrong = try await CLIProcess.fail(["db", "count", secret, "Person", "--key-file", wrongFile])
        #expect(wrong.contains("the key does not open"))
        #expect(!wrong.contains("horse"))
        let plain = try await CLIProcess.fail(["db", "tables", sample.path, "--key-file", keyFile])
        #expect(plain.contains("plain SQLite file"))

        _ = try await CLIProcess.succeed(["db", "rekey", secret, "--key-file", keyFile, "--new-key-file", newFile])
        _ = try await CLIProcess.fail(["db", "count", secret, "Person", "--key-file", keyFile])
        let back = directory.path("back.sqlite")
        _ = try await CLIProcess.succeed(["db", "decrypt", secret, back, "--key-file", newFile])
        #expect(try await CLIProcess.succeed(["db", "count", back, "Person"]) == "3\n")
    }
}
