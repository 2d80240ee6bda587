import ArgumentParser
import Foundation
import GQLCrypto
import GQLStore

/// The key of an encrypted database: `--key-file F`, else the `GQL_DB_KEY` environment variable, else none.
///
/// The file (or the variable) holds a passphrase, one trailing newline ignored; `raw:` followed by 64 hex digits is
/// a 32-byte raw key instead. The key is never printed, not even in an error.
struct DatabaseKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "A file holding the key of an encrypted database: a passphrase, or raw: and 64 hex digits. "
                + "Default: the GQL_DB_KEY environment variable; neither means a plain database.",
            valueName: "file"))
    var keyFile: String?

    static let environmentVariable = "GQL_DB_KEY"

    /// The key the options name, or `nil` for a plain database.
    func key() throws -> GQLDatabase.Key? {
        if let keyFile { return try Self.key(file: keyFile) }
        guard let text = ProcessInfo.processInfo.environment[Self.environmentVariable], !text.isEmpty else {
            return nil
        }
        return try Self.key(from: text, source: Self.environmentVariable)
    }

    /// The key in the file at `path`.
    static func key(file path: String) throws -> GQLDatabase.Key {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("cannot read the key file \(path)")
        }
        return try key(from: String(decoding: data, as: UTF8.self), source: "the key file \(path)")
    }

    /// Parses the text of a key file or of `GQL_DB_KEY`; `source` names it in errors (never the key).
    static func key(from text: String, source: String) throws -> GQLDatabase.Key {
        var text = Substring(text)
        if text.hasSuffix("\r\n") {
            text = text.dropLast(2)
        } else if text.hasSuffix("\n") {
            text = text.dropLast()
        }
        guard text.hasPrefix("raw:") else {
            guard !text.isEmpty else { throw CLIError("\(source) is empty") }
            return .passphrase(String(text))
        }
        guard let bytes = Bytes.unhex(text.dropFirst(4)), bytes.count == 32 else {
            throw CLIError("\(source): a raw key is raw: and 64 hex digits")
        }
        return .raw(Data(bytes))
    }

    /// Opens `path` with the key, if any.
    func openDatabase(_ path: String, configuration: GQLDatabase.Configuration = .init()) throws -> GQLDatabase {
        if let key = try key() { return try GQLDatabase(path: path, key: key, configuration: configuration) }
        return try GQLDatabase(path: path, configuration: configuration)
    }
}
