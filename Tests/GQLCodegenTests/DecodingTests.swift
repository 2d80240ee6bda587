import Foundation
import GQLCore
import GQLNet
import Testing

/// Recorded answers decode into the generated blog types (Generated/Blog, compiled in this target): aliases, nested
/// lists, nullability, fragments, interface and union type cases with unknown members, enums with unknown values;
/// variables and input objects encode with absent fields left out.
@Suite struct DecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try GQLValue(json: json).decode(type)
    }

    @Test func aliasesListsOfListsAndFragments() throws {
        let data = try decode(
            GetUserQuery.Data.self,
            """
            {"user": {"id": "1", "name": "Ann", "handle": null, "role": "EDITOR", "createdAt": "2026-01-01T00:00:00Z",
              "posts": [{"id": "p1", "title": "Hi", "body": null, "status": "DRAFT", "tags": ["a"],
                         "author": {"id": "1", "name": "Ann", "role": "EDITOR"}}],
              "friends": [[{"id": "2", "name": "Bob"}, null], null]}}
            """)
        let user = try #require(data.user)
        #expect(user.handle == nil && user.role == .editor)
        #expect(user.posts[0].postParts.status == .draft)
        #expect(user.posts[0].postParts.author.userParts.name == "Ann")
        #expect(user.friends?[0]?[0]?.name == "Bob" && user.friends?[0]?[1] == nil && user.friends?[1] == nil)
        // Encodable on request (codegen.json), and back to the same value.
        #expect(try GQLValue(encoding: data).decode(GetUserQuery.Data.self) == data)
    }

    @Test func aMissingNonNullFieldIsADecodingErrorNamingThePath() throws {
        #expect {
            try decode(GetUserQuery.Data.self, #"{"user": {"id": "1", "role": "ADMIN"}}"#)
        } throws: { error in
            (error as? GQLError)?.code == .decoding && "\(error)".contains("name")
        }
    }

    @Test func unionMembersAndAnUnknownOne() throws {
        let data = try decode(
            SearchQuery.Data.self,
            """
            {"search": [
              {"__typename": "User", "id": "1", "name": "Ann", "role": "ADMIN"},
              {"__typename": "Post", "id": "p1", "title": "Hi", "status": "PUBLISHED"},
              {"__typename": "Comment", "id": "c1"},
              {"__typename": "Poll", "id": "x1"}
            ]}
            """)
        guard case .user(let user) = data.search[0], case .post(let post) = data.search[1],
            case .unknown(let comment) = data.search[2], case .unknown(let poll) = data.search[3]
        else {
            Issue.record("wrong cases: \(data.search)")
            return
        }
        #expect(user.id == "1" && user.userParts.role == .admin)
        #expect(post.status == .published)
        #expect(comment.__typename == "Comment" && poll.__typename == "Poll" && poll.id == "x1")
        // Encodable on request: every case keeps its `__typename`, so the encoded answer decodes to the same cases.
        #expect(user.__typename == "User" && post.__typename == "Post")
        #expect(try GQLValue(encoding: data).decode(SearchQuery.Data.self) == data)
    }

    @Test func interfaceCasesMergeTheFieldsEveryConditionSelects() throws {
        let post = try decode(
            GetNodeQuery.Data.self,
            """
            {"node": {"__typename": "Post", "id": "p1", "title": "Hi", "author": {"id": "1", "name": "Ann"}}}
            """)
        guard case .post(let value)? = post.node else { throw Failure("not a post: \(String(describing: post.node))") }
        #expect(value.author.id == "1" && value.author.name == "Ann")
        let comment = try decode(
            GetNodeQuery.Data.self, #"{"node": {"__typename": "Comment", "id": "c1", "author": {"id": "2"}}}"#)
        guard case .authored(let authored)? = comment.node else { throw Failure("not authored") }
        #expect(authored.author.id == "2")
        let user = try decode(GetNodeQuery.Data.self, #"{"node": {"__typename": "User", "id": "1"}}"#)
        guard case .unknown(let other)? = user.node else { throw Failure("not unknown") }
        #expect(other.__typename == "User")
    }

    @Test func unknownEnumValuesAreKept() throws {
        let data = try decode(
            OnPostSubscription.Data.self, #"{"onPost": {"id": "p", "title": "t", "status": "SCHEDULED"}}"#)
        #expect(data.onPost?.status == .unknown("SCHEDULED"))
        #expect(data.onPost?.status.rawValue == "SCHEDULED")
        #expect(PostStatus(rawValue: "ARCHIVED") == .archived)
        #expect(try GQLValue(encoding: data).decode(OnPostSubscription.Data.self) == data)
    }

    @Test func variablesLeaveOutAbsentValuesAndKeepNulls() throws {
        #expect(GetUserQuery(id: "1").variables.gqlValue == ["id": "1"])
        #expect(GetUserQuery(id: "1", first: 3).variables.gqlValue == ["id": "1", "first": 3])
        let input = UpdateUserInput(id: "1", name: "Ann", nickname: nil, role: .value(.admin))
        #expect(
            UpdateUserMutation(input: input).variables.gqlValue
                == ["input": ["id": "1", "name": "Ann", "nickname": .null, "role": "ADMIN"]])
        let create = CreatePostInput(title: "Hi", tags: .value(["a", "b"]), authorId: "1")
        #expect(create.gqlValue == ["title": "Hi", "tags": ["a", "b"], "authorId": "1"])
        #expect(GQLNullable<String>("x") == .value("x") && GQLNullable<String>(nil) == .null)
    }

    @Test func documentsCarryTheirFragmentsAndTypename() {
        #expect(
            ListPostsQuery.document.hasSuffix(
                "fragment PostParts on Post { id title body status tags author { ...UserParts } } fragment UserParts on User { id name role }"
            ))
        #expect(GetNodeQuery.document.contains("node(id: $id) { __typename id"))
        #expect(ListPostsQuery.operationName == "ListPosts")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
