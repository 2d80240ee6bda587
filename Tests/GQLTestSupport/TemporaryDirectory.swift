import Foundation

/// A fresh directory under the temporary directory, named `<prefix>-<UUID>`, removed by `cleanup()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "gqltest") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func cleanup() { try? FileManager.default.removeItem(at: url) }
}
