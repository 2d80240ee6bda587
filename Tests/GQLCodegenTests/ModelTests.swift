import Foundation
import GQLCodegen
import GQLCore
import GQLStore
import Testing

/// The models generated for AppSync's `@model` types (Fixtures/Models, compiled from Generated/Models): a GQLStore
/// table each, stored and read back through the generated `init(row:)`, and the schemas that cannot have one refused
/// by place.
@Suite struct ModelTests {
    func database() throws -> (GQLDatabase, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try GQLDatabase(path: directory.appendingPathComponent("app.sqlite").path), directory)
    }

    @Test func generatedModelsStoreAndReadBack() throws {
        let (db, directory) = try database()
        defer { try? FileManager.default.removeItem(at: directory) }
        var post = Models.Post(id: "p1", title: "Hello", status: .published, tags: ["a", "b"], views: 3)
        post.metadata = #"{"k":1}"#
        try post.insert(db)
        #expect(try Models.Post.fetchOne(db, key: "p1") == post)
        try Models.Post(id: "p2").insert(db)
        let fresh = try Models.Post.fetchOne(db, key: "p2")
        #expect(fresh?.status == .draft && fresh?.title == "" && fresh?.tags == nil && fresh?._version == nil)
        #expect(try Models.Post.fetchAll(db, "status = ?", ["PUBLISHED"]).map(\.id) == ["p1"])

        // Keyed by @primaryKey, a keyword column; Author by the key codegen.json names.
        let comment = Models.Comment(postId: "p1", commentId: "c1", text: "hi", class: "x", mood: .unknown("LATER"))
        try comment.insert(db)
        #expect(try Models.Comment.fetchOne(db, key: "c1") == comment)
        try Models.Author(name: "Ann", born: 1815).insert(db)
        #expect(try Models.Author.fetchOne(db, key: "Ann")?.born == 1815)
        #expect(Models.Comment.primaryKey() == "commentId" && Models.Author.primaryKey() == "name")

        // Rows the server sent (the dictionary API, as GQLSync writes them) read back the same way.
        try db.insert("Post", ["id": "p3", "title": "From the server", "status": "DRAFT", "tags": ["x"], "views": 9,
            "_version": 4, "_deleted": false, "_lastChangedAt": 1_700_000_000_000])
        let synced = try Models.Post.fetchOne(db, key: "p3")
        #expect(synced?.tags == ["x"] && synced?._version == 4 && synced?._deleted == false)
        #expect(synced?._lastChangedAt == 1_700_000_000_000)
    }

    func diagnostics(_ sdl: String, models: [String: String] = [:]) throws -> [String] {
        do {
            let schema = try GQLCodegen.Schema(sdl: sdl, name: "schema.graphql")
            _ = try GQLCodegen(configuration: .init(models: models)).generate(schema: schema, documents: [])
            return []
        } catch let failure as GQLCodegen.Failure {
            return failure.diagnostics.map(\.description)
        }
    }

    @Test func modelsWithoutAUsableKeyAreRefusedByPlace() throws {
        let query = "type Query { ping: String }\n"
        #expect(try diagnostics(query + "type Note @model {\n  text: String\n}")
            == ["schema.graphql:2:6: error: the model Note has no key: add a field `id: ID!`, mark one @primaryKey, or name it in the config's models"])
        #expect(try diagnostics(query + "type Note @model { id: ID! tags: [String] }", models: ["Note": "tags"])
            == ["schema.graphql:2:6: error: the model Note's key tags must be a non-null String, ID or Int, not [String]"])
        #expect(try diagnostics(query + "type Note { id: ID! }", models: ["Note": "nope"])
            == ["schema.graphql:2:6: error: the model Note's key nope is no scalar field of it"])
        #expect(try diagnostics(query, models: ["Missing": "id"])
            == ["schema.graphql:1:1: error: the model Missing is no object type of the schema"])
        #expect(try diagnostics(query + "type Note @model { a: ID! @primaryKey b: ID! @primaryKey }")
            == ["schema.graphql:2:39: error: Note: a second @primaryKey; a model's table has one key column"])
    }

    @Test func noModelsNoStoreImport() throws {
        let schema = try GQLCodegen.Schema(sdl: "type Query { ping: String }", name: "schema.graphql")
        let output = try GQLCodegen().generate(
            schema: schema, documents: [.init(text: "query Ping { ping }", name: "Ping.graphql")])
        #expect(!output.files.values.contains { $0.contains("import GQLStore") })
    }
}
