import Foundation
import GQLCache
import Testing

/// Fragments on interfaces and unions match through the possible types a schema (SDL or introspection) gives.
@Suite struct SchemaTests {
    static let sdl = """
        directive @model on OBJECT
        interface Node { id: ID! }
        interface Named implements Node { id: ID! name: String }
        type User implements Node & Named @model { id: ID! name: String }
        type Post implements Node { id: ID! title: String }
        type Tag { label: String }
        union SearchResult = User | Post
        extend union SearchResult = Tag
        type Query { node(id: ID!): Node search(text: String): [SearchResult] }
        """

    static let introspection = """
        {"data": {"__schema": {"types": [
          {"kind": "INTERFACE", "name": "Node", "possibleTypes": [{"name": "User"}, {"name": "Post"}]},
          {"kind": "INTERFACE", "name": "Named", "possibleTypes": [{"name": "User"}]},
          {"kind": "UNION", "name": "SearchResult", "possibleTypes": [{"name": "User"}, {"name": "Post"},
            {"name": "Tag"}]},
          {"kind": "OBJECT", "name": "User", "possibleTypes": null}
        ]}}}
        """

    static let query = """
        query {
          search(text: "a") { ... on Named { name } ... on Post { id title } ... on SearchResult { __typename } }
          node(id: "1") { ... on Node { id } ... on Named { name } }
        }
        """

    static let answer: GQLValue = [
        "search": [
            ["__typename": "User", "name": "Ada"],
            ["__typename": "Post", "id": "p1", "title": "Hello"],
            ["__typename": "Tag"],
        ],
        "node": ["__typename": "User", "id": "1", "name": "Ada"],
    ]

    @Test func sdlAndIntrospectionGiveTheSamePossibleTypes() throws {
        let fromSDL = try GQLCache.Configuration.possibleTypes(inSchema: Self.sdl)
        #expect(fromSDL["Node"] == ["User", "Post"])
        #expect(fromSDL["Named"] == ["User"])
        #expect(fromSDL["SearchResult"] == ["User", "Post", "Tag"])
        #expect(try GQLCache.Configuration.possibleTypes(inSchema: Self.introspection) == fromSDL)
        #expect(throws: GQLError.self) { try GQLCache.Configuration.possibleTypes(inSchema: "type {") }
        #expect(throws: GQLError.self) { try GQLCache.Configuration.possibleTypes(inSchema: #"{"data": 1}"#) }
    }

    /// GitHub's public schema (shared/corpus, beside the repository; read there, not copied in): a real SDL of
    /// 50,000 lines no one here wrote, with descriptions, directives, interfaces implementing interfaces and unions.
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../shared/corpus/github-schema.graphql").standardizedFileURL

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SchemaTests.corpus.path)))
    func gitHubsPublicSchemaGivesItsUnionsAndInterfaces() throws {
        let types = try GQLCache.Configuration.possibleTypes(inSchema: String(contentsOf: Self.corpus, encoding: .utf8))
        #expect(types["IssueOrPullRequest"] == ["Issue", "PullRequest"])
        #expect(
            types["SearchResultItem"]
                == [
                    "App", "Discussion", "Issue", "MarketplaceListing", "Organization", "PullRequest", "Repository",
                    "User",
                ])
        #expect(types["Node"]?.isSuperset(of: ["Repository", "User", "Issue", "PullRequest"]) == true)
    }

    @Test(arguments: [SchemaTests.sdl, SchemaTests.introspection])
    func interfaceAndUnionFragmentsMatchWithASchema(schema: String) throws {
        let cache = try memoryCache { try? $0.readSchema(schema) }
        try cache.write(Self.query, data: Self.answer)
        #expect(try cache.read(Self.query) == Self.answer)
        #expect(try cache.record("User:1")?["name"] == "Ada")
    }

    @Test func withoutASchemaOnlyExactTypeNamesMatch() throws {
        let cache = try memoryCache()
        try cache.write(Self.query, data: Self.answer)
        // Neither `... on Node` nor `... on Named` applied to the User: only its `__typename` was stored and read.
        #expect(try cache.record("User:1")?["name"] == nil)
        #expect(try cache.read(Self.query)["node"] == ["__typename": "User"])
    }
}
