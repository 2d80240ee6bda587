import Foundation
import Testing

@testable import GQLDevServer

@Suite("Engine schema")
struct EngineSchemaTests {
    @Test func defaultModelGeneratesTheAppSyncOperations() throws {
        let fixture = try EngineFixture()
        let sdl = fixture.engine.schemaSDL
        for expected in [
            "getObjects(objectId: ID!): Objects",
            "listObjects(filter: ModelObjectsFilterInput, limit: Int, nextToken: String): ModelObjectsConnection",
            "syncObjects(filter: ModelObjectsFilterInput, limit: Int, nextToken: String, lastSync: AWSTimestamp)",
            "createObjects(input: CreateObjectsInput!, condition: ModelObjectsConditionInput): Objects",
            "updateObjects(input: UpdateObjectsInput!, condition: ModelObjectsConditionInput): Objects",
            "deleteObjects(input: DeleteObjectsInput!, condition: ModelObjectsConditionInput): Objects",
            "onCreateObjects(filter: ModelSubscriptionObjectsFilterInput): Objects",
            "onUpdateObjects(filter: ModelSubscriptionObjectsFilterInput): Objects",
            "onDeleteObjects(filter: ModelSubscriptionObjectsFilterInput): Objects",
            "_version: Int!", "_deleted: Boolean", "_lastChangedAt: AWSTimestamp!",
            "scalar AWSDateTime", "scalar AWSJSON", "scalar AWSTimestamp",
        ] {
            #expect(sdl.contains(expected), "missing \(expected)")
        }
        #expect(fixture.engine.modelNames == ["Objects"])
        #expect(try fixture.db.tableNames().contains("Objects"))
    }

    /// Without @primaryKey the key is `id`, as AppSync's, even when another ID! field comes first.
    @Test func theKeyIsIdBeforeAnEarlierIDField() throws {
        let parsed = try ModelParser.parse("type Comment @model {\n  postID: ID!\n  id: ID!\n  content: String\n}")
        #expect(parsed.models.first?.key == "id")
        #expect(
            try ModelParser.parse("type Comment @model { postID: ID! content: String }").models.first?.key == "postID")
    }

    @Test func pluralizationFollowsAppSync() {
        let cases = [
            "Objects": "Objects", "Post": "Posts", "Category": "Categories", "Box": "Boxes", "Person": "People",
            "Status": "Statuses", "Day": "Days", "BlogPost": "BlogPosts", "Address": "Addresses", "Sheep": "Sheep",
            "Knife": "Knives", "Analysis": "Analyses", "Church": "Churches",
        ]
        for (singular, plural) in cases {
            #expect(Pluralizer.plural(of: singular) == plural, "\(singular)")
        }
    }

    @Test func customSchemaWithTwoModels() async throws {
        let fixture = try EngineFixture(
            sdl: """
                enum Mood { HAPPY SAD }
                type Category @model { id: ID!, name: String!, tags: [String], mood: Mood, meta: AWSJSON }
                type Person @model {
                  email: String! @primaryKey
                  age: Int
                  born: AWSDateTime
                  seen: AWSTimestamp
                }
                """)
        #expect(fixture.engine.modelNames == ["Category", "Person"])
        let sdl = fixture.engine.schemaSDL
        #expect(sdl.contains("listCategories("))
        #expect(sdl.contains("listPeople("))
        #expect(sdl.contains("getPerson(email: String!): Person"))
        #expect(sdl.contains("createCategory(input: CreateCategoryInput!"))
        let tables = try fixture.db.tableNames()
        #expect(tables.contains("Category") && tables.contains("Person"))

        let created = try await fixture.data(
            """
            mutation { createCategory(input: {name: "n", tags: ["a", "b"], mood: HAPPY, meta: "{\\"k\\":1}"}) {
              id name tags mood meta _version } }
            """)
        let category = try #require(created["createCategory"])
        #expect(category["tags"] == ["a", "b"])
        #expect(category["mood"] == "HAPPY")
        #expect(category["meta"] == #"{"k":1}"#)
        #expect(category["_version"] == 1)
        #expect(category["id"]?.stringValue?.isEmpty == false)

        _ = try await fixture.data(
            #"mutation { createPerson(input: {email: "a@b.c", age: 7, born: "2020-01-02T03:04:05.000Z", seen: 99}) { email } }"#
        )
        let people = try await fixture.data(
            #"{ listPeople(filter: {age: {ge: 7}}) { items { email age born seen } } }"#)
        #expect(
            people["listPeople"]?["items"] == [
                ["email": "a@b.c", "age": 7, "born": "2020-01-02T03:04:05.000Z", "seen": 99]
            ])
        let byTag = try await fixture.data(#"{ listCategories(filter: {tags: {contains: "b"}}) { items { name } } }"#)
        #expect(byTag["listCategories"]?["items"]?.arrayValue?.count == 1)
        let noTag = try await fixture.data(#"{ listCategories(filter: {tags: {contains: "z"}}) { items { name } } }"#)
        #expect(noTag["listCategories"]?["items"] == [])
    }

    @Test(arguments: [
        ("type Post @model { id: ID!, author: User }\ntype User @model { id: ID! }", "User", 1),
        ("type Post @model {\n  id: ID!\n  blob: Bytes\n}", "Bytes", 3),
        ("type Post { id: ID! }", "no @model", 1),
        ("type Post @model {\n  title: String\n}", "no key", 1),
        ("type Post @model { id: ID!, _version: Int }", "kept by the server", 1),
        (
            "type Post @model {\n  blogID: ID! @primaryKey(sortKeyFields: [\"title\"])\n  title: String!\n}",
            "composite keys", 2
        ),
        ("type Post @model { id: ID! \n nested: [[String]] }", "lists of lists", 2),
        ("type Post @model { id: ID! \n title: String @searchable @weird }", "@weird", 2),
        ("interface Node { id: ID! }", "only `type X @model", 1),
        ("type Post @model { id: ID!", "does not parse", 1),
        ("scalar Bytes\ntype Post @model { id: ID! }", "scalar Bytes", 1),
        ("type Note @model { id: ID! }\ntype note @model { id: ID! }", "differ only in case", 2),
        ("type sqlite_master @model { id: ID! }", "reserved for the database", 1),
        (
            "type Note @model {\n  id: ID!\n  title: String\n  Title: String\n}",
            "Note.Title (line 4) differ only in case", 3
        ),
        ("type Note @model {\n  id: ID!\n  _VERSION: Int\n}", "kept by the server", 3),
        (
            "type Note @model { id: ID!, tags: " + String(repeating: "[", count: 100) + "String"
                + String(repeating: "]", count: 100) + " }", "nests brackets", 1
        ),
    ])
    func badSchemasAreRejectedWithTheirLine(sdl: String, mention: String, line: Int) throws {
        let error = #expect(throws: GQLError.self) { try EngineFixture(sdl: sdl) }
        let message = error?.message ?? ""
        #expect(error?.code == .invalidArgument)
        #expect(message.contains(mention), "\(message)")
        #expect(message.contains("line \(line)"), "\(message)")
    }

    @Test func unsupportedFieldTypeNamesTypeAndField() throws {
        let error = #expect(throws: GQLError.self) {
            try EngineFixture(sdl: "type Post @model {\n  id: ID!\n  cover: Image\n}")
        }
        #expect(error?.message.contains("Post.cover") == true)
        #expect(error?.message.contains("Image") == true)
    }

    @Test func introspectionDescribesTheModel() async throws {
        let fixture = try EngineFixture()
        let data = try await fixture.data(
            """
            { __schema { queryType { name } mutationType { name } subscriptionType { name } }
              __type(name: "Objects") { fields { name } } }
            """)
        #expect(data["__schema"]?["subscriptionType"]?["name"] == "Subscription")
        let names = (data["__type"]?["fields"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        #expect(
            Set(names) == [
                "objectId", "text", "number", "double", "boolean", "createdAt", "updatedAt",
                "_version", "_deleted", "_lastChangedAt",
            ])
    }

    @Test func generatedSchemaIsPrintableWithoutAServer() throws {
        let sdl = try GQLDevServer.generatedSchema("type Box @model { id: ID! }")
        #expect(sdl.contains("listBoxes("))
        #expect(sdl.contains("syncBoxes("))
        #expect(sdl.contains("onDeleteBox("))
    }

    @Test func anExistingTableGainsNewFieldsAndKeepsItsRows() async throws {
        let fixture = try EngineFixture(sdl: "type Note @model { id: ID!, title: String }")
        _ = try await fixture.data(#"mutation { createNote(input: {id: "n", title: "old"}) { id } }"#)
        let evolved = try DevEngine(
            sdl: "type Note @model { id: ID!, title: String, stars: Int, tags: [String] }", database: fixture.db)
        let create = #"mutation { createNote(input: {id: "m", stars: 5, tags: ["a"]}) { stars tags } }"#
        let created = await evolved.execute(.init(query: create)).value
        #expect(created["data"]?["createNote"] == ["stars": 5, "tags": ["a"]])
        let old = await evolved.execute(.init(query: #"{ getNote(id: "n") { title stars _version } }"#)).value
        #expect(old["data"]?["getNote"] == ["title": "old", "stars": nil, "_version": 1])

        let error = #expect(throws: GQLError.self) {
            try DevEngine(sdl: "type Note @model { slug: String! @primaryKey }", database: fixture.db)
        }
        #expect(error?.message.contains("no column slug") == true)
    }

    @Test func integerKeysEnumsAndFloatsWorkEndToEnd() async throws {
        let fixture = try EngineFixture(
            sdl: """
                enum Level { LOW HIGH }
                type Counter @model { n: Int! @primaryKey, level: Level, ratio: Float }
                """)
        #expect(fixture.engine.schemaSDL.contains("getCounter(n: Int!): Counter"))
        let missingKey = await fixture.run("mutation { createCounter(input: {level: LOW}) { n } }")
        #expect(!missingKey.errorMessages.isEmpty)
        for n in 1...3 {
            _ = try await fixture.data(
                "mutation { createCounter(input: {n: \(n), level: \(n == 2 ? "HIGH" : "LOW"), ratio: \(Double(n) / 4)}) { n } }"
            )
        }
        let high = try await fixture.data("{ listCounters(filter: {level: {eq: HIGH}}) { items { n level ratio } } }")
        #expect(high["listCounters"]?["items"] == [["n": 2, "level": "HIGH", "ratio": 0.5]])
        let first = try await fixture.data("{ listCounters(limit: 2) { items { n } nextToken } }")
        let token = try #require(first["listCounters"]?["nextToken"]?.stringValue)
        let rest = try await fixture.data(
            "query($t: String) { listCounters(limit: 2, nextToken: $t) { items { n } nextToken } }",
            ["t": .string(token)])
        #expect(first["listCounters"]?["items"] == [["n": 1], ["n": 2]])
        #expect(rest["listCounters"]?["items"] == [["n": 3]])
        let got = try await fixture.data("{ getCounter(n: 3) { n level } }")
        #expect(got["getCounter"] == ["n": 3, "level": "LOW"])
    }
}
