import Foundation
import GQLCodegen
import Testing

/// Documents that cannot be generated are refused with every error named by file:line:column, and nothing else.
@Suite struct ValidationTests {
    static func schema() throws -> GQLCodegen.Schema {
        try GQLCodegen.Schema(
            sdl: """
                interface Node { id: ID! }
                type User implements Node { id: ID! name: String posts(first: Int!): [Post!]! }
                type Post implements Node { id: ID! title: String! status: Status }
                type Tag { label: String }
                union Item = User | Post
                enum Status { DRAFT LIVE }
                input PostInput { title: String! status: Status }
                type Query { user(id: ID!): User node(id: ID!): Node item: Item tag: Tag }
                type Mutation { createPost(input: PostInput!): Post }
                """, name: "schema.graphql")
    }

    /// The errors generating `documents` against `schema` (by default ``schema()``) gives; a schema that does not
    /// parse shows as its error, as any other error does.
    func diagnostics(_ documents: [String: String], schema: GQLCodegen.Schema? = nil) -> [String] {
        do {
            _ = try GQLCodegen().generate(
                schema: schema ?? Self.schema(),
                documents: documents.map { GQLCodegen.Document(text: $0.value, name: $0.key) })
            return []
        } catch let failure as GQLCodegen.Failure {
            return failure.diagnostics.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func anUnknownFieldIsNamedWhereItStands() {
        #expect(
            diagnostics(["a.graphql": "query A {\n  user(id: 1) {\n    nmae\n  }\n}"])
                == ["a.graphql:3:5: error: unknown field nmae on the object User"])
    }

    @Test func wrongArguments() {
        let found = diagnostics([
            "b.graphql": """
            query B { user(id: 1, first: 2) { posts { id } } }
            mutation C { createPost(input: { title: 3, status: GONE, extra: 1 }) { id } }
            """
        ])
        #expect(found.contains("b.graphql:1:23: error: unknown argument first of user (it takes: id)"))
        #expect(found.contains("b.graphql:1:35: error: posts needs the argument first: Int!"))
        #expect(found.contains("b.graphql:2:41: error: not a value of the scalar String"))
        #expect(found.contains("b.graphql:2:52: error: not a value of the enum Status"))
        #expect(found.contains("b.graphql:2:58: error: unknown field extra of the input object PostInput"))
    }

    /// GraphQL's "fields can merge" rule: one response key across fragments answers one field, or fields of object
    /// types that exclude each other with answers of the same type; the arguments must agree too.
    @Test func fieldsThatCannotMergeAreNamedAtBothPlaces() {
        #expect(
            diagnostics(["a.graphql": "query M { item { ... on User { x: name } ... on Post { x: status } } }"]) == [
                "a.graphql:1:56: error: x cannot answer both User.name: String (at a.graphql:1:32) and Post.status: "
                    + "Status: their answers have different types; alias one of them"
            ])
        #expect(
            diagnostics(["b.graphql": "query N { user(id: 1) { posts(first: 1) { id } posts(first: 2) { id } } }"]) == [
                "b.graphql:1:48: error: posts cannot answer both User.posts(first: 1): [Post!]! (at b.graphql:1:25) "
                    + "and User.posts(first: 2): [Post!]!: their arguments differ; alias one of them"
            ])
        // Through a fragment: the spread's field and the selection's own on the same type.
        let found = diagnostics([
            "c.graphql": "query O { node(id: 1) { id ...Parts } }\nfragment Parts on Node { id: __typename }"
        ])
        #expect(
            found.count == 1 && found.first?.hasPrefix("c.graphql:2:26: error: id cannot answer both Node.id") == true)
        // What merges: the same field on exclusive object types, and one field selected twice.
        #expect(
            diagnostics([
                "d.graphql": "query P { item { ... on User { id x: name } ... on Post { id x: title } } }"
            ]).count == 1)  // String and String! differ in shape
        #expect(
            diagnostics([
                "e.graphql": "query Q { item { ... on User { id } ... on Post { id } } node(id: 1) { id id } }"
            ])
            .isEmpty)
    }

    /// Input objects' fields are compared in name order, as graphql-js does: written in another order they are
    /// the same argument.
    @Test func argumentsThatDifferOnlyInTheirFieldsOrderMerge() {
        #expect(
            diagnostics([
                "m.graphql": """
                mutation R {
                  createPost(input: { title: "a", status: LIVE }) { id }
                  createPost(input: { status: LIVE, title: "a" }) { title }
                }
                """
            ]).isEmpty)
        #expect(
            diagnostics([
                "n.graphql": """
                mutation S {
                  createPost(input: { title: "a", status: LIVE }) { id }
                  createPost(input: { status: DRAFT, title: "a" }) { title }
                }
                """
            ]).count == 1)
    }

    /// One pair of fields on exclusive object types does not make the group's other pairs exclusive: the
    /// sub-fields of two `User.posts` under one key must still merge (`t` is two different fields).
    @Test func aConflictUnderTheNonExclusivePairsIsFoundBesideAnExclusivePair() throws {
        let schema = try GQLCodegen.Schema(
            sdl: """
                type User { posts: [Post!]! }
                type Post { replies: [Post!]! title: String! body: String! }
                union Item = User | Post
                type Query { item: Item }
                """, name: "schema.graphql")
        let found = diagnostics(
            [
                "o.graphql": """
                query T {
                  item {
                    ... on User { p: posts { t: title } }
                    ... on Post { p: replies { t: title } }
                    ... on User { p: posts { t: body } }
                  }
                }
                """
            ], schema: schema)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("o.graphql:5:30: error: t cannot answer both Post.title") == true)
        #expect(found.first?.contains("they are different fields") == true)
    }

    @Test func aFragmentOnAnImpossibleType() {
        let found = diagnostics([
            "c.graphql":
                "query D { user(id: 1) { ... on Post { id } ...TagParts } }\nfragment TagParts on Tag { label }"
        ])
        #expect(
            found == [
                "c.graphql:1:32: error: an inline fragment on Post can never apply within User: no object type is both",
                "c.graphql:1:47: error: the fragment TagParts on Tag can never apply within User: no object type is both",
            ])
    }

    @Test func aNameUsedTwiceNamesBothPlaces() {
        let found = diagnostics([
            "d.graphql": "query E { tag { label } }\nfragment F on Tag { label }",
            "e.graphql": "query E { tag { label } }\nfragment F on Tag { label }\nfragment Status on Tag { label }",
        ])
        #expect(found.contains("e.graphql:1:7: error: the name EQuery is used twice (first at d.graphql:1:7)"))
        #expect(found.contains("e.graphql:2:10: error: the name F is used twice (first at d.graphql:2:10)"))
        #expect(found.contains { $0.hasPrefix("e.graphql:3:10: error: the name Status is used twice") })
    }

    @Test func variablesMustBeDeclaredUsedAndOfInputTypes() {
        let found = diagnostics([
            "f.graphql": "query G($id: ID!, $extra: Int, $bad: User) { user(id: $nope) { id } }"
        ])
        #expect(found.contains("f.graphql:1:19: error: the variable $extra is never used"))
        #expect(found.contains("f.graphql:1:38: error: the variable $bad cannot be of the output type User"))
        #expect(found.contains("f.graphql:1:55: error: the variable $nope is not declared by the operation G"))
        #expect(found.contains("f.graphql:1:9: error: the variable $id is never used"))
        #expect(found.count == 5, "\(found)")
    }

    @Test func conditionsTakeABooleanAndTheirVariablesAreUsed() {
        // On a field, an inline fragment and a fragment spread alike.
        #expect(
            diagnostics([
                "h.graphql": """
                query H($a: Boolean!, $b: Boolean!, $c: Boolean = true) {
                  tag @include(if: $a) { label }
                  ... @skip(if: $b) { tag { label } }
                  ...Q @include(if: $c)
                }
                fragment Q on Query { item { __typename } }
                """
            ]) == [])
        #expect(
            diagnostics(["i.graphql": "query I($a: String) { tag @include(if: $a) { label } }"])
                == ["i.graphql:1:40: error: the variable $a is a String where a Boolean! is expected"])
    }

    @Test func syntaxErrorsAndAnonymousOperations() {
        #expect(
            diagnostics(["g.graphql": "query { tag { label } }"])
                == ["g.graphql:1:1: error: an operation needs a name: its Swift type is named after it"])
        let syntax = diagnostics(["h.graphql": "query H { tag { label }"])
        #expect(syntax.count == 1 && syntax[0].hasPrefix("h.graphql:1:24: error: Syntax Error"), "\(syntax)")
    }

    @Test func leafAndCompositeSelectionsAreChecked() {
        let found = diagnostics(["i.graphql": "query I { tag { label { x } } user(id: 1) }"])
        #expect(found.contains("i.graphql:1:23: error: Tag.label is a String, which has no fields to select"))
        #expect(found.contains("i.graphql:1:31: error: Query.user is a User: select its fields (`user { … }`)"))
    }
}
