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
        try Models.Author(name: "Ann", born: 1815, row: 7).insert(db)
        #expect(try Models.Author.fetchOne(db, key: "Ann")?.born == 1815)
        #expect(try Models.Author.fetchOne(db, key: "Ann")?.row == 7)  // a column named like init(row:)'s parameter
        #expect(Models.Comment.primaryKey() == "commentId" && Models.Author.primaryKey() == "name")

        // A @model without @primaryKey is keyed by id (added when the SDL has none), not its first ID!: two
        // replies to one post are two rows.
        #expect(Models.Reply.primaryKey() == "id")
        try Models.Reply(id: "r1", postID: "p1", content: "first").insert(db)
        try Models.Reply(id: "r2", postID: "p1", content: "second").insert(db)
        #expect(
            try Models.Reply.fetchAll(db, "postID = ?", ["p1"]).compactMap(\.content).sorted() == ["first", "second"])

        // Rows the server sent (the dictionary API, as GQLSync writes them) read back the same way.
        try db.insert(
            "Post",
            [
                "id": "p3", "title": "From the server", "status": "DRAFT", "tags": ["x"], "views": 9,
                "_version": 4, "_deleted": false, "_lastChangedAt": 1_700_000_000_000,
            ])
        let synced = try Models.Post.fetchOne(db, key: "p3")
        #expect(synced?.tags == ["x"] && synced?._version == 4 && synced?._deleted == false)
        #expect(synced?._lastChangedAt == 1_700_000_000_000)
    }

    func diagnostics(_ sdl: String, models: [String: String] = [:]) throws -> [String] {
        do {
            let schema = try GQLCodegen.Schema(sdl: sdl, name: "schema.graphql")
            _ = try GQLCodegen(configuration: .init(models: models, allModels: true)).generate(
                schema: schema, documents: [])
            return []
        } catch let failure as GQLCodegen.Failure {
            return failure.diagnostics.map(\.description)
        }
    }

    @Test func modelsWithoutAUsableKeyAreRefusedByPlace() throws {
        let query = "type Query { ping: String }\n"
        #expect(
            try diagnostics(query + "type Note @model { id: ID! tags: [String] }", models: ["Note": "tags"])
                == [
                    "schema.graphql:2:6: error: the model Note's key tags must be a non-null String, ID or Int, not [String]"
                ])
        #expect(
            try diagnostics(query + "type Note { id: ID! }", models: ["Note": "nope"])
                == ["schema.graphql:2:6: error: the model Note's key nope is no scalar field of it"])
        #expect(
            try diagnostics(query, models: ["Missing": "id"])
                == ["schema.graphql:1:1: error: the model Missing is no object type of the schema"])
        // Amplify's composite key: not a key on its partition field alone, where rows sharing it would overwrite.
        #expect(
            try diagnostics(
                query + "type Like @model {\n  postID: ID! @primaryKey(sortKeyFields: [\"userID\"])\n  userID: ID!\n}")
                == [
                    "schema.graphql:2:6: error: the model Like's @primaryKey has sortKeyFields (userID): a composite key, which "
                        + "a table's one key column cannot hold (rows sharing postID would overwrite each other); name a unique "
                        + "field as its key in the config's models, or leave the type out"
                ])
        #expect(
            try diagnostics(
                query + "type Like @model { id: ID! postID: ID! @primaryKey(sortKeyFields: [\"id\"]) }",
                models: ["Like": "id"]) == [])
        #expect(
            try diagnostics(query + "type Note @model { a: ID! @primaryKey b: ID! @primaryKey }")
                == ["schema.graphql:2:39: error: Note: a second @primaryKey; a model's table has one key column"])
    }

    /// Models are opt-in: an Amplify schema's @model types (one without `id`) change nothing without `models`.
    @Test func modelsOnlyWhenTheConfigAsks() throws {
        let blog = try Fixtures.generate("Blog")
        let url = Fixtures.schemaURL("Blog")
        let sdl = try String(contentsOf: url, encoding: .utf8) + "\ntype Todo @model { name: String! }\n"
        let withModel = try GQLCodegen(configuration: Fixtures.configuration("Blog"))
            .generate(
                schema: GQLCodegen.Schema(sdl: sdl, name: url.lastPathComponent), documents: Fixtures.documents("Blog"))
        #expect(withModel == blog)
        #expect(!withModel.files.values.contains { $0.contains("import GQLStore") })

        let all = try GQLCodegen.Configuration(json: #"{ "models": true }"#)
        #expect(all.allModels && all.models.isEmpty)
        let listed = try GQLCodegen.Configuration(json: #"{ "models": ["Todo", "Objects"] }"#)
        #expect(!listed.allModels && listed.models == ["Todo": "", "Objects": ""])
        let keyed = try GQLCodegen.Configuration(json: #"{ "models": { "Objects": "objectId" } }"#)
        #expect(!keyed.allModels && keyed.models == ["Objects": "objectId"])
        #expect(try GQLCodegen.Configuration(json: "{}").allModels == false)
        let todo = try GQLCodegen(configuration: .init(json: #"{ "models": ["Todo"] }"#)).generate(
            schema: GQLCodegen.Schema(
                sdl: "type Query { ping: String }\ntype Todo @model { name: String! }", name: "s.graphql"),
            documents: [])
        let types = try #require(todo.files["SchemaTypes.graphql.swift"])
        #expect(types.contains("import GQLStore") && types.contains("public var id: String = \"\""))
        #expect(types.contains(#"public static func primaryKey() -> String { "id" }"#))
    }

    @Test func noModelsNoStoreImport() throws {
        let schema = try GQLCodegen.Schema(sdl: "type Query { ping: String }", name: "schema.graphql")
        let output = try GQLCodegen().generate(
            schema: schema, documents: [.init(text: "query Ping { ping }", name: "Ping.graphql")])
        #expect(!output.files.values.contains { $0.contains("import GQLStore") })
    }
}
