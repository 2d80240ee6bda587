import Foundation
import GQLStore
import Testing

/// A fresh database file in its own temporary directory, removed when the test ends.
final class TempDatabase: Sendable {
    let directory: URL
    let db: GQLDatabase

    init(configuration: GQLDatabase.Configuration = .init()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gqlstore-tests-\(UUID().uuidString)", isDirectory: true)
        db = try GQLDatabase(path: directory.appendingPathComponent("test.sqlite").path, configuration: configuration)
    }

    var path: String { db.path }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

struct User: GQLObject, Equatable {
    var userId = 0
    var name = ""
    var age = 0
    var approved = false
    var nickname: String? = nil
    static func primaryKey() -> String { "userId" }
}

func makeUser(_ id: Int, _ name: String = "User", age: Int = 30, approved: Bool = false) -> User {
    var user = User()
    user.userId = id
    user.name = name
    user.age = age
    user.approved = approved
    return user
}
