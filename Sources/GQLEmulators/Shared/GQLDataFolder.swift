import Foundation
import GQLCore

/// The one folder an emulator keeps its state in (`gql-cli serve --data DIR`): every file it writes is inside it,
/// written atomically (a temporary file in the folder, then renamed), so a killed process leaves whole files or
/// none.
///
/// ```swift
/// let folder = try GQLDataFolder(path: ".gql-local")
/// let storage = try folder.subfolder("storage")       // .gql-local/storage, created if missing
/// ```
///
/// Paths inside it come from clients (an S3 key, a user's id): ``resolve(_:)`` refuses every one that could leave
/// the folder — `..` and `.` components, absolute paths, NUL bytes, empty components — with a thrown ``GQLError``.
public struct GQLDataFolder: Sendable, Hashable {
    /// The folder's absolute, standardized URL.
    public let url: URL

    /// Opens the folder at `path`, creating it (and its parents) when missing.
    ///
    /// - Throws: ``GQLError`` `.io` when it cannot be created or is a file.
    public init(path: String) throws {
        let url = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        try Self.makeDirectory(url)
        self.url = url
    }

    /// A fresh folder under the system's temporary directory (for tests and `serve` without `--data`).
    public static func temporary(prefix: String = "gql-emulators") throws -> GQLDataFolder {
        let base = FileManager.default.temporaryDirectory
        return try GQLDataFolder(path: base.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path)
    }

    /// The folder `name` inside this one (one component, checked like ``resolve(_:)``), created when missing.
    public func subfolder(_ name: String) throws -> GQLDataFolder {
        let child = try resolve(name)
        try Self.makeDirectory(child)
        return GQLDataFolder(checked: child)
    }

    private init(checked url: URL) { self.url = url }

    /// The URL of `relative` inside the folder.
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for an empty path, an absolute one, a NUL byte, or a `.`, `..`
    ///   or empty component: nothing a client sends can name a file outside the folder.
    public func resolve(_ relative: String) throws -> URL {
        guard !relative.isEmpty else {
            throw GQLError(.invalidArgument, "An empty path names no file in the data folder.")
        }
        guard !relative.utf8.contains(0) else {
            throw GQLError(.invalidArgument, "A path in the data folder must not contain a NUL byte.")
        }
        guard !relative.hasPrefix("/"), !relative.hasPrefix("\\") else {
            throw GQLError(.invalidArgument, "A path in the data folder must be relative, not absolute.")
        }
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        for component in components where component.isEmpty || component == "." || component == ".." {
            throw GQLError(
                .invalidArgument, "A path in the data folder must not have an empty, `.` or `..` component.")
        }
        var resolved = url
        for component in components { resolved.appendPathComponent(String(component)) }
        // Belt and braces: the joined path is still below the folder.
        guard resolved.standardizedFileURL.path.hasPrefix(url.path + "/") else {
            throw GQLError(.invalidArgument, "The path leaves the data folder.")
        }
        return resolved
    }

    /// A new, unique temporary file's URL inside the folder's `.tmp` subfolder (on the same file system as the
    /// data, so a rename into place is atomic). Nothing is created.
    package func temporaryFileURL() throws -> URL {
        let tmp = url.appendingPathComponent(".tmp", isDirectory: true)
        try Self.makeDirectory(tmp)
        return tmp.appendingPathComponent(UUID().uuidString)
    }

    /// Removes what a killed process left in the folder's `.tmp`: the files named as ``temporaryFileURL()`` names
    /// them (a UUID) and nothing else — not a folder, not a file of another name, nothing outside `.tmp` (a link
    /// of such a name is removed itself, never what it points to). Call it when an emulator opens its folder,
    /// before it writes there.
    package func removeStaleTemporaries() {
        let tmp = url.appendingPathComponent(".tmp", isDirectory: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) ?? []
        where UUID(uuidString: name) != nil {
            // unlink(2) removes a file or a link and refuses a folder.
            _ = unlink(tmp.appendingPathComponent(name).path)
        }
    }

    /// Writes `data` to `relative` atomically: into a temporary file, flushed, then renamed over the old one.
    package func write(_ data: Data, to relative: String) throws {
        let target = try resolve(relative)
        let temporary = try temporaryFileURL()
        do {
            try Self.writeSynced(data, to: temporary)
            try moveIntoPlace(temporary, target)
        } catch let error as GQLError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw GQLError(.io, "Could not write \(relative) in the data folder: \(error.localizedDescription)")
        }
    }

    /// Writes `data` to the new file `url` and flushes it to the disk (`fsync`), so a rename of it that survives a
    /// power loss brings its bytes, not an empty file.
    package static func writeSynced(_ data: Data, to url: URL) throws {
        let file = try OpenFile.creating(url)
        try data.withUnsafeBytes { bytes in try file.writeAll(bytes) }
        try file.synchronize()
    }

    /// Reads `relative`; `nil` when there is no such file.
    package func read(_ relative: String) throws -> Data? {
        let target = try resolve(relative)
        guard FileManager.default.fileExists(atPath: target.path) else { return nil }
        do {
            return try Data(contentsOf: target)
        } catch {
            throw GQLError(.io, "Could not read \(relative) in the data folder: \(error.localizedDescription)")
        }
    }

    /// Renames the temporary file `temporary` (from ``temporaryFileURL()``) to `target` inside the folder,
    /// replacing what is there, creating the parent folders; `rename(2)`, so readers see the old file or the new.
    package func moveIntoPlace(_ temporary: URL, _ target: URL) throws {
        guard target.standardizedFileURL.path.hasPrefix(url.path + "/") else {
            throw GQLError(.invalidArgument, "The path leaves the data folder.")
        }
        try Self.makeDirectory(target.deletingLastPathComponent())
        guard rename(temporary.path, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw GQLError(.io, "Could not move a file into place in the data folder: \(reason).")
        }
    }

    private static func makeDirectory(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw GQLError(.io, "\(url.path) is a file; the data folder needs a folder there.")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw GQLError(.io, "Could not create the folder \(url.path): \(error.localizedDescription)")
        }
    }
}
