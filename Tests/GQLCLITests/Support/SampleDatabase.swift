import Foundation
import GQLStore

/// A person, as the sample database stores them.
struct Person: GQLObject {
    var id = 0
    var name = ""
    var age = 0
    var nickname: String? = nil
    var score = 0.0

    static func primaryKey() -> String { "id" }
}

/// A second table, so listings have more than one name.
struct Note: GQLObject {
    var noteId = ""
    var text = ""

    static func primaryKey() -> String { "noteId" }
}

/// A database file written with GQLStore, closed before the CLI opens it:
/// Person 1 Ada 36 / 2 Bob 25 "bobby" / 3 Cy 41, an index on age, one Note.
struct SampleDatabase {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("sample.sqlite")
        let db = try GQLDatabase(path: path)
        try db.write { tx in
            try Person(id: 1, name: "Ada", age: 36, nickname: nil, score: 9.5).insert(tx)
            try Person(id: 2, name: "Bob", age: 25, nickname: "bobby", score: 7.25).insert(tx)
            try Person(id: 3, name: "Cy", age: 41, nickname: nil, score: 8).insert(tx)
            try Note(noteId: "n1", text: "hello").insert(tx)
            try tx.execute("CREATE INDEX person_age ON \"Person\"(age)")
        }
    }

    /// Opens the file again with GQLStore, to check what the CLI did.
    func open() throws -> GQLDatabase { try GQLDatabase(path: path) }
}
