import Foundation
import GQLCore

extension GQLSync {
    /// The longest name an outbox file may have: 255 bytes, less SQLite's longest suffix beside it (`-journal`).
    static let outboxFileNameLimit = 255 - "-journal".utf8.count

    /// The file name of engine `name`'s own outbox (``GQLSync/init(_:configuration:)``): `gqlsync-<name>.sqlite`
    /// when the name is made of lower-case ASCII letters, digits, `.`, `-` and `_` and fits (as every name derived
    /// from a lower-case URL is: those keep the file name they always had). Any other name — one with `/` (a path
    /// out of the directory), NUL, upper-case letters (two names differing only in case would share one file on a
    /// case-insensitive file system), other characters, or too long for a file name — keeps a readable prefix
    /// (ASCII letters, digits, `.`, `-`, `_`; others as `_`), cut to fit, then `~` and a hash of the whole name
    /// (``NameDigest``): `gqlsync-My_App~0123….sqlite`. A `~` is never in a kept name, so the two kinds never meet.
    static func outboxFileName(_ name: String) -> String {
        let (prefix, suffix) = ("gqlsync-", ".sqlite")
        let plain = name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-"
                || scalar == "_"
        }
        let whole = prefix + name + suffix
        if plain, whole.utf8.count <= outboxFileNameLimit { return whole }
        let digest = NameDigest.tilde(name)
        let room = outboxFileNameLimit - prefix.utf8.count - digest.utf8.count - suffix.utf8.count
        var kept = ""
        for scalar in name.unicodeScalars.prefix(room) {
            let safe =
                scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || ".-_".unicodeScalars.contains(scalar))
            kept.unicodeScalars.append(safe ? scalar : "_")
        }
        return prefix + kept + digest + suffix
    }

    /// Where engine `name` keeps its own outbox in `directory`: ``outboxFileName(_:)``, or the file an earlier
    /// version named `gqlsync-<name>.sqlite` when the names differ, that file is there (a name without `/` or NUL,
    /// which made a file of the directory) and it holds this engine's outbox. Such a file keeps being opened where
    /// it is — nothing is renamed, so no crash can leave an outbox half moved, and two engines whose names differ
    /// only in case that shared one file on a case-insensitive file system keep sharing it — while a new engine
    /// gets the new name. Looking at the old file reads it read-only, changing nothing.
    static func outboxPath(in directory: URL, name: String) -> String {
        let path = directory.appendingPathComponent(outboxFileName(name)).path
        let old = "gqlsync-\(name).sqlite"
        guard old != outboxFileName(name), !name.contains("/"), !name.unicodeScalars.contains("\0"),
            old.utf8.count <= 255
        else { return path }
        let oldPath = directory.appendingPathComponent(old).path
        guard FileManager.default.fileExists(atPath: oldPath),
            let names = try? readingOnly(oldPath, engineNames(in:)), names.contains(name)
        else { return path }
        return oldPath
    }
}
