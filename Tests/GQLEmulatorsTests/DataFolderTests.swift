import Foundation
import GQLCore
import GQLEmulators
import GQLTestSupport
import Testing

/// The data folder: every path a client can send stays inside it, and writes are whole or absent.
@Suite("Emulator data folder")
struct DataFolderTests {
    @Test func pathsThatWouldLeaveTheFolderAreRefused() throws {
        let directory = try TemporaryDirectory(prefix: "gql-datafolder")
        defer { directory.cleanup() }
        let folder = try GQLDataFolder(path: directory.path("data"))
        for hostile in ["", "../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/.", "a\u{0}b", "..", "\\x", "a/"] {
            #expect(throws: GQLError.self, "\(hostile.debugDescription)") { try folder.resolve(hostile) }
        }
        #expect(try folder.resolve("a/b c/d..e").path == directory.path("data") + "/a/b c/d..e")
        #expect(!FileManager.default.fileExists(atPath: directory.path("x")))
    }

    @Test func aSubfolderIsCreatedInsideAndChecked() throws {
        let directory = try TemporaryDirectory(prefix: "gql-datafolder")
        defer { directory.cleanup() }
        let folder = try GQLDataFolder(path: directory.path("data"))
        let storage = try folder.subfolder("storage")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: storage.url.path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(throws: GQLError.self) { try folder.subfolder("..") }
    }

    @Test func aFileWhereTheFolderShouldBeIsAnError() throws {
        let directory = try TemporaryDirectory(prefix: "gql-datafolder")
        defer { directory.cleanup() }
        try Data("x".utf8).write(to: directory.url.appendingPathComponent("file"))
        #expect(throws: GQLError.self) { try GQLDataFolder(path: directory.path("file")) }
    }
}
