import Foundation
import GQLCore
import GQLCrypto
import Testing

@testable import GQLDevServer

/// AppSync's owner authorization on `@auth(rules: [{ allow: owner }])` models: creates stamp the caller's `sub`,
/// reads, updates, deletes and subscriptions see the caller's items only, a caller with no identity is refused;
/// over the engine, and over HTTP and graphql-transport-ws with OpenID Connect tokens.
@Suite("GQLDevServer owner authorization", .timeLimit(.minutes(1)))
struct EngineOwnerTests {
    static let sdl = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          id: ID!
          text: String
        }
        type Post @model @auth(rules: [{ allow: owner, ownerField: "author" }, { allow: public }]) {
          id: ID!
          title: String
          author: String
        }
        type Open @model {
          id: ID!
          text: String
        }
        """

    static let createNote = "mutation($input: CreateNoteInput!) { createNote(input: $input) { id text owner } }"
    static let listNotes = "{ listNotes { items { id text owner } } }"

    /// The response of `query` run by `owner`.
    static func run(_ fixture: EngineFixture, _ query: String, _ variables: GQLValues = [:], as owner: String?)
        async -> GQLValue
    {
        await fixture.engine.execute(.init(query: query, variables: variables, owner: owner)).value
    }

    @Test func ownersSeeCreateAndChangeOnlyTheirOwnItems() async throws {
        let fixture = try EngineFixture(sdl: Self.sdl)
        let annNote = await Self.run(fixture, Self.createNote, ["input": ["id": "n1", "text": "ann's"]], as: "ann")
        #expect(annNote["data"]?["createNote"] == ["id": "n1", "text": "ann's", "owner": "ann"])
        _ = await Self.run(fixture, Self.createNote, ["input": ["id": "n2", "text": "bob's"]], as: "bob")

        let annList = await Self.run(fixture, Self.listNotes, as: "ann")
        #expect(annList["data"]?["listNotes"]?["items"] == [["id": "n1", "text": "ann's", "owner": "ann"]])
        let sync = await Self.run(fixture, "{ syncNotes { items { id } } }", as: "bob")
        #expect(sync["data"]?["syncNotes"]?["items"] == [["id": "n2"]])

        // Another's item: refused as AppSync refuses it, and left as it was.
        let get = await Self.run(fixture, "{ getNote(id: \"n1\") { id } }", as: "bob")
        #expect(get["data"]?["getNote"] == .null)
        #expect(get["errors"]?[0]?["extensions"]?["errorType"] == "Unauthorized")
        for mutation in [
            "mutation { updateNote(input: {id: \"n1\", text: \"mine now\"}) { id } }",
            "mutation { deleteNote(input: {id: \"n1\"}) { id } }",
            "mutation { updateNote(input: {id: \"n2\", owner: \"ann\"}) { id } }",
        ] {
            let refused = await Self.run(fixture, mutation, as: "bob")
            #expect(refused["errors"]?[0]?["extensions"]?["errorType"] == "Unauthorized", "\(mutation)")
        }
        let forged = await Self.run(
            fixture, Self.createNote, ["input": ["id": "n3", "text": "x", "owner": "ann"]], as: "bob")
        #expect(forged["errors"]?[0]?["extensions"]?["errorType"] == "Unauthorized")
        let unchanged = await Self.run(fixture, "{ getNote(id: \"n1\") { text owner _deleted } }", as: "ann")
        #expect(unchanged["data"]?["getNote"] == ["text": "ann's", "owner": "ann", "_deleted": false])

        // The owner changes and deletes their own.
        let updated = await Self.run(
            fixture, "mutation { updateNote(input: {id: \"n1\", text: \"edited\"}) { text owner } }", as: "ann")
        #expect(updated["data"]?["updateNote"] == ["text": "edited", "owner": "ann"])
        let deleted = await Self.run(fixture, "mutation { deleteNote(input: {id: \"n1\"}) { _deleted } }", as: "ann")
        #expect(deleted["data"]?["deleteNote"] == ["_deleted": true])

        // No identity (an API key, or no credentials): refused, on owner models only.
        let anonymous = await Self.run(fixture, Self.listNotes, as: nil)
        #expect(anonymous["errors"]?[0]?["extensions"]?["errorType"] == "Unauthorized")
        let open = await Self.run(fixture, "{ listOpens { items { id } } }", as: nil)
        #expect(open["errors"] == nil)
    }

    @Test func theRulesOwnerFieldIsHonouredAndTheSchemaShowsTheOwner() async throws {
        let fixture = try EngineFixture(sdl: Self.sdl)
        let created = await Self.run(
            fixture, "mutation { createPost(input: {id: \"p1\", title: \"t\"}) { id author } }", as: "ann")
        #expect(created["data"]?["createPost"] == ["id": "p1", "author": "ann"])
        let bob = await Self.run(fixture, "{ listPosts { items { id } } }", as: "bob")
        #expect(bob["data"]?["listPosts"]?["items"] == [])
        #expect(fixture.engine.schemaSDL.contains("owner: String"))
        #expect(fixture.engine.schemaSDL.contains("input CreateNoteInput {\n  id: ID\n  text: String\n  owner: String"))

        let wrongType = "type T @model @auth(rules: [{ allow: owner }]) { id: ID! owner: Int }"
        #expect(throws: GQLError.self) { try EngineFixture(sdl: wrongType) }
    }

    @Test func subscriptionsDeliverTheCallersItemsOnly() async throws {
        let fixture = try EngineFixture(sdl: Self.sdl)
        let query = "subscription { onCreateNote { id owner } }"
        guard case .stream(let annEvents) = await fixture.engine.subscribe(.init(query: query, owner: "ann")) else {
            Issue.record("ann's subscription was refused")
            return
        }
        guard case .failed(let anonymous) = await fixture.engine.subscribe(.init(query: query)) else {
            Issue.record("a subscription without an identity was accepted")
            return
        }
        #expect(anonymous["errors"]?[0]?["message"]?.stringValue?.contains("Not Authorized") == true)
        #expect(await fixture.waitForSubscriptions(1))
        _ = await Self.run(fixture, Self.createNote, ["input": ["id": "b1"]], as: "bob")
        _ = await Self.run(fixture, Self.createNote, ["input": ["id": "a1"]], as: "ann")
        let events = try await collect(annEvents, count: 1)
        #expect(events == [["data": ["onCreateNote": ["id": "a1", "owner": "ann"]]]])
    }

    @Test func tokensOverHTTPAndWebSocketsCarryTheOwner() async throws {
        let key = try RSAPrivateKey.generate()
        let jwks = try JWKSet(keys: [.init(id: "k1", key: key.publicKey)]).json()
        var configuration = GQLDevServer.Configuration()
        configuration.schema = Self.sdl
        configuration.openIDConnect = .init(keys: .jwks(Data(jwks.utf8)), issuer: "https://tenant.test/")
        func token(_ sub: String) throws -> String {
            let now = Int64(Date().timeIntervalSince1970)
            return try JWTSigner.rs256(
                ["iss": "https://tenant.test/", "sub": .string(sub), "iat": .int(now), "exp": .int(now + 600)],
                key: key, keyId: "k1")
        }
        let (ann, bob) = (try token("auth0|ann"), try token("auth0|bob"))
        try await withDevServer(configuration) { server, endpoints in
            let created = try await post(
                endpoints.http,
                ["query": .string(Self.createNote), "variables": ["input": ["id": "h1", "text": "over HTTP"]]],
                headers: ["Authorization": "Bearer \(ann)"])
            #expect(created.json?["data"]?["createNote"]?["owner"] == "auth0|ann")
            let bobs = try await post(
                endpoints.http, ["query": .string(Self.listNotes)], headers: ["Authorization": "Bearer \(bob)"])
            #expect(bobs.json?["data"]?["listNotes"]?["items"] == [])
            let anns = try await post(
                endpoints.http, ["query": .string(Self.listNotes)], headers: ["Authorization": ann])
            #expect(anns.json?["data"]?["listNotes"]?["items"]?.arrayValue?.count == 1)

            let seen = try await withWebSocket(endpoints.webSocket, protocols: "graphql-transport-ws") { socket in
                try await socket.send(["type": "connection_init", "payload": ["Authorization": .string(bob)]])
                _ = try await socket.receive()  // connection_ack
                try await socket.send([
                    "type": "subscribe", "id": "1", "payload": ["query": "subscription { onCreateNote { id owner } }"],
                ])
                #expect(await server.waitForSubscriptions(1))
                for (id, who) in [("w1", ann), ("w2", bob)] {
                    _ = try await post(
                        endpoints.http,
                        ["query": .string(Self.createNote), "variables": ["input": ["id": .string(id)]]],
                        headers: ["Authorization": "Bearer \(who)"])
                }
                return try await socket.receive()
            }
            #expect(seen.result??["payload"]?["data"]?["onCreateNote"] == ["id": "w2", "owner": "auth0|bob"])
        }
    }
}
