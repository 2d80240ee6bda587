import Foundation
import GQLCore
import GQLNet
import GQLStore

@testable import GQLSync

/// The app's model of the server's `Note`: the server's fields it keeps, with the server's `_version`.
struct SyncedNote: GQLObject, Equatable {
    var id = ""
    var title: String?
    var body: String?
    var n: Int?
    var _version: Int?
    static func primaryKey() -> String { "id" }
    static func tableName() -> String { "Note" }
}

/// A clock a test moves by hand (pull cursors are dated by it).
final class TestClock: Sendable {
    private let time = GQLLocked(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

extension SyncFixture {
    /// Creates notes `first...last` on the server (ids `note-<n>`, titles `title <n>`) through a client of its own.
    func createNotes(_ numbers: ClosedRange<Int>) async throws {
        for n in numbers {
            let result = try await client.mutation(
                "mutation($input: CreateNoteInput!) { createNote(input: $input) { id } }",
                [
                    "input": GQLValue.object([
                        "id": .string("note-\(n)"), "title": .string("title \(n)"), "n": .int(Int64(n)),
                    ])
                ])
            guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        }
    }

    /// Changes a server note's title (no `_version` check).
    func retitle(_ id: String, _ title: String) async throws {
        let result = try await client.mutation(
            "mutation($input: UpdateNoteInput!) { updateNote(input: $input) { id } }",
            ["input": ["id": id, "title": title]])
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
    }

    /// Deletes a server note (a soft delete: a tombstone for `syncNotes`).
    func deleteNote(_ id: String) async throws {
        let result = try await client.mutation(
            "mutation($input: DeleteNoteInput!) { deleteNote(input: $input) { id } }", ["input": ["id": id]])
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
    }

    /// The app's database, a file in the fixture's directory.
    func appDatabase() throws -> GQLDatabase {
        try GQLDatabase(path: directory.path("app.sqlite"))
    }
}
