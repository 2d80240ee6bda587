import Foundation
import GQLCore
import GQLNet
import GQLStore
import Testing

@testable import GQLSync

/// `GQLSync(server)` names its own outbox file after the engine: names that could not make a safe file name of
/// their own (a `/`, NUL, upper case, other characters, too long) get a prefix and a hash; names that could keep
/// their file, and an outbox an earlier version made under the old name keeps being opened there.
@Suite(.timeLimit(.minutes(1))) struct OutboxFileNameTests {
    @Test func plainNamesKeepTheirFileNames() {
        for name in ["127.0.0.1-4000-graphql", "notes_v1", "example.com-graphql", "..", "a"] {
            #expect(GQLSync.outboxFileName(name) == "gqlsync-\(name).sqlite")
        }
        // The longest name that keeps its file name, and one byte more.
        let longest = String(repeating: "n", count: GQLSync.outboxFileNameLimit - 15)
        #expect(GQLSync.outboxFileName(longest) == "gqlsync-\(longest).sqlite")
        #expect(GQLSync.outboxFileName(longest + "n").contains("~"))
    }

    @Test func otherNamesGetASafeFileNameOfTheirOwn() {
        let names = [
            "../../etc/passwd", "a/b", "a\0b", "a", "A", "Notes", "NOTES", "notes v1", "café", "\u{1F600}",
            String(repeating: "x", count: 300), String(repeating: "x", count: 299) + "y",
            String(repeating: "é", count: 200),
        ]
        let files = names.map(GQLSync.outboxFileName)
        for (name, file) in zip(names, files) {
            #expect(!file.contains("/") && !file.unicodeScalars.contains("\0"), "\(name): \(file)")
            #expect(file.hasPrefix("gqlsync-") && file.hasSuffix(".sqlite"), "\(name): \(file)")
            #expect(file.utf8.count <= 247, "\(name): \(file.utf8.count) bytes")
            #expect(file.unicodeScalars.allSatisfy { $0.isASCII }, "\(name): \(file)")
        }
        // Distinct even where case does not count.
        #expect(Set(files.map { $0.lowercased() }).count == names.count, "\(files)")
        #expect(GQLSync.outboxFileName("../../etc/passwd").hasPrefix("gqlsync-.._.._etc_passwd~"))
        #expect(GQLSync.outboxFileName("Notes") == GQLSync.outboxFileName("Notes"))
    }

    @Test func anEngineOpensItsFileWhateverItsNameAndAnOldFileIsKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let server = GQLServer(HTTP: "http://127.0.0.1:9/graphql")
        let queries = try syncTestQueries()
        func open(_ name: String, at path: String) throws -> GQLSync {
            var configuration = GQLSync.Configuration()
            configuration.name = name
            configuration.queries = queries
            configuration.delivers = false
            return try GQLSync(server, path: path, configuration: configuration)
        }

        // A name with a path in it stays in the directory, and its engine opens and queues.
        let escaping = GQLSync.outboxPath(in: directory.url, name: "../outside/x")
        #expect(URL(fileURLWithPath: escaping).deletingLastPathComponent().path == directory.url.path)
        let sync = try open("../outside/x", at: escaping)
        try await sync.steady("CreateNote", ["input": ["n": 1]])
        #expect(sync.pendingCount == 1)
        try await sync.shutdown()

        // An outbox an earlier version made as gqlsync-Notes.sqlite keeps being opened there, with its items.
        let old = directory.path("gqlsync-Notes.sqlite")
        let earlier = try open("Notes", at: old)
        try await earlier.steady("CreateNote", ["input": ["n": 2]])
        try await earlier.shutdown()
        #expect(GQLSync.outboxPath(in: directory.url, name: "Notes") == old)
        let again = try open("Notes", at: GQLSync.outboxPath(in: directory.url, name: "Notes"))
        #expect(again.pendingCount == 1)
        try await again.shutdown()
        // A file under the old name that holds no outbox of the engine (here: another engine's, as a
        // case-insensitive file system would show gqlsync-Notes.sqlite to NOTES) is not taken: the new name is.
        try FileManager.default.copyItem(atPath: old, toPath: directory.path("gqlsync-NOTES.sqlite"))
        #expect(GQLSync.outboxPath(in: directory.url, name: "NOTES") == directory.path(GQLSync.outboxFileName("NOTES")))
        // With neither, the new name.
        #expect(GQLSync.outboxPath(in: directory.url, name: "Other") == directory.path(GQLSync.outboxFileName("Other")))
        try await server.shutdown()
    }
}
