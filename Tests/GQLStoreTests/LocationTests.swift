import Foundation
import GQLStore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A temporary directory, removed at the end.
private final class TempDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("gqlstore-location-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with the environment variables set (or unset, for `nil`), then restores them.
private func withEnvironment<T>(_ values: [String: String?], _ body: () throws -> T) rethrows -> T {
    var saved: [String: String?] = [:]
    for (name, value) in values {
        saved[name] = getenv(name).map { String(cString: $0) }
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    return try body()
}

private var processDirectoryName: String {
    let name = ProcessInfo.processInfo.processName
    return name.isEmpty ? "GraphQLite" : name
}

private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// The default location reads process-wide environment variables, so these tests run one at a time, and only in a
/// run of their own (`make test` runs them after the main run with GQL_LOCATION_TESTS=1): setenv while other tests
/// spawn processes races Foundation's Process.run, which copies the environment, and crashed a full run (SIGSEGV).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["GQL_LOCATION_TESTS"] == "1"))
struct LocationTests {
    #if !canImport(Darwin)
        @Test func fileGoesUnderXDGDataHomeAndTheProcessName() throws {
            let base = try TempDirectory()
            let expected = base.url.appendingPathComponent(processDirectoryName).appendingPathComponent("loc.sqlite")
            try withEnvironment(["XDG_DATA_HOME": base.url.path]) {
                #expect(exists(expected.path) == false)
                do {
                    let db = try GQLDatabase(file: "loc.sqlite")
                    #expect(db.path == expected.path)
                    #expect(exists(expected.path))
                    try makeUser(1, "Located").insert(db)
                }
                // Opening the same name again finds the same file.
                let again = try GQLDatabase(file: "loc.sqlite")
                #expect(try User.fetchOne(again, key: 1)?.name == "Located")
            }
        }

        @Test func theDefaultInitialiserUsesDatabaseSqlite() throws {
            let base = try TempDirectory()
            try withEnvironment(["XDG_DATA_HOME": base.url.path]) {
                let db = try GQLDatabase()
                let expected = base.url.appendingPathComponent(processDirectoryName)
                    .appendingPathComponent("database.sqlite")
                #expect(db.path == expected.path)
                #expect(exists(expected.path))
                #expect(try GQLDatabase.defaultDirectory().path == expected.deletingLastPathComponent().path)
            }
        }

        @Test func missingXDGDataHomeDirectoriesAreCreated() throws {
            let base = try TempDirectory()
            let deep = base.url.appendingPathComponent("a/b/c", isDirectory: true)
            try withEnvironment(["XDG_DATA_HOME": deep.path]) {
                let db = try GQLDatabase(file: "deep.sqlite")
                #expect(
                    exists(deep.appendingPathComponent(processDirectoryName).appendingPathComponent("deep.sqlite").path)
                )
                try makeUser(1).insert(db)
                #expect(try User.count(db) == 1)
            }
        }
    #endif

    @Test func fileMustBeAFileName() throws {
        for name in ["", "dir/db.sqlite", "/abs.sqlite"] {
            let error = try #require(throws: GQLError.self) { try GQLDatabase(file: name) }
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func pathCreatesMissingDirectories() throws {
        let base = try TempDirectory()
        let path = base.url.appendingPathComponent("one/two/three/db.sqlite").path
        #expect(exists(base.url.appendingPathComponent("one").path) == false)
        do {
            let db = try GQLDatabase(path: path)
            #expect(db.path == path)
            #expect(exists(path))
            try makeUser(1, "Deep").insert(db)
        }
        let reopened = try GQLDatabase(path: path)
        #expect(try User.fetchOne(reopened, key: 1)?.name == "Deep")
    }

    @Test func memoryPathOpensAPrivateDatabaseWithoutAFile() throws {
        let db = try GQLDatabase(path: ":memory:")
        try makeUser(1, "Memory").insert(db)
        #expect(try User.fetchOne(db, key: 1)?.name == "Memory")
        #expect(try db.read { tx in try User.count(tx) } == 1)
        #expect(exists(":memory:") == false)
        let other = try GQLDatabase(path: ":memory:")
        #expect(try other.tableNames().isEmpty)
    }

    @Test func pathIntoAnExistingDirectoryWorks() throws {
        let base = try TempDirectory()
        let path = base.url.appendingPathComponent("flat.sqlite").path
        let db = try GQLDatabase(path: path)
        try makeUser(1).insert(db)
        #expect(exists(path))
    }

    @Test func anEmptyPathOrADirectoryThatCannotBeMadeAreErrors() throws {
        let empty = try #require(throws: GQLError.self) { try GQLDatabase(path: "") }
        #expect(empty.code == .invalidArgument)

        let base = try TempDirectory()
        let blocker = base.url.appendingPathComponent("blocker")
        try Data("a file".utf8).write(to: blocker)
        let error = try #require(throws: GQLError.self) {
            try GQLDatabase(path: blocker.appendingPathComponent("sub/db.sqlite").path)
        }
        #expect(error.code == .io)
        #expect(error.message.contains(blocker.path))
    }
}
