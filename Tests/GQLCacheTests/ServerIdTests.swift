import Foundation
import GQLCache
import Testing

/// Ids with quotes, dots, colons and Unicode, as servers send them: each object is a record of its own, and every
/// answer reads back from the cache the same once the server is gone.
@Suite(.timeLimit(.minutes(2))) struct ServerIdTests {
    static let ids = [#"say "hi""#, "a.b", "a", "x:y", "ünï©ødé 🎉", #"back\slash"#, "c,d"]

    @Test func againstTheDevServer() async throws {
        let fixture = try await CacheFixture.make(notes: 0)
        for id in Self.ids {
            let created = try await fixture.client.mutation(
                try fixture.queries["CreateNote"],
                ["input": ["id": .string(id), "title": .string("title of \(id)")] as GQLValue])
            #expect(created.errors.isEmpty, "\(id): \(created.errors)")
        }
        var answers: [String: GQLValue] = [:]
        for id in Self.ids {
            let result = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": id], policy: .networkOnly)
            #expect(result.data?["getNote"]?["id"] == .string(id) && result.errors.isEmpty, "\(id): \(result.errors)")
            answers[id] = result.data
        }
        let list = try await fixture.cache.fetch(fixture.client, "ListNotes", policy: .networkOnly)
        _ = try await fixture.cache.mutate(fixture.client, "UpdateNote", ["input": ["id": "a.b", "title": "dotted"]])
        await fixture.stopServer()
        for id in Self.ids {
            let cached = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": id], policy: .cacheFirst)
            let title = id == "a.b" ? "dotted" : "title of \(id)"
            #expect(cached.source == .cache && cached.data?["getNote"]?["title"] == .string(title), "\(id)")
            #expect(try fixture.cache.record(GQLCache.key("Note", id))?["id"] == .string(id), "\(id)")
        }
        #expect(answers["a"] == (try fixture.cache.read("GetNote", ["id": "a"])))
        let listed = try fixture.cache.read("ListNotes")["listNotes"]?["items"]?.arrayValue?.map { $0["id"] }
        #expect(listed == list.data?["listNotes"]?["items"]?.arrayValue?.map { $0["id"] })
        #expect(try fixture.cache.statistics().types["Note"] == Self.ids.count)
        await fixture.finish()
    }

    @Test func againstStrawberry() async throws {
        let world = try await StrawberryCacheWorld.start()
        let ids = ["1", #"say "hi""#, "a.b", "x:y", "ünï©ødé 🎉"]
        var answers: [String: GQLValue] = [:]
        for id in ids {
            let result = try await world.cache.fetch(world.client, StrawberryCacheWorld.person, ["id": id])
            #expect(result.source == .network && result.data?["person"]?["id"] == .string(id), "\(id)")
            answers[id] = result.data
        }
        let people = try await world.cache.fetch(world.client, StrawberryCacheWorld.people, policy: .networkOnly)
        // An object that references itself, under a dotted id.
        let itself = #"query { person(id: "a.b") { id name me { id name me { id } } } }"#
        let network = try await world.cache.fetch(world.client, itself, policy: .networkOnly)
        #expect(network.data?["person"]?["me"]?["me"]?["id"] == "a.b")
        #expect(try world.cache.record(#"Person:a\.b"#)?["me"] == ["__ref": #"Person:a\.b"#])
        _ = try await world.cache.mutate(world.client, StrawberryCacheWorld.rename, ["id": "x:y", "name": "Renamed"])
        await world.stopServer()
        for id in ids {
            let cached = try await world.cache.fetch(world.client, StrawberryCacheWorld.person, ["id": id])
            #expect(cached.source == .cache && cached.data?["person"]?["id"] == .string(id), "\(id)")
            let name: GQLValue? = id == "x:y" ? .string("Renamed") : answers[id]?["person"]?["name"]
            #expect(cached.data?["person"]?["name"] == name && cached.data?["person"]?["age"] != nil, "\(id)")
        }
        #expect(try await world.cache.fetch(world.client, itself).data == network.data)
        let listed = try world.cache.read(StrawberryCacheWorld.people)["people"]?.arrayValue?.map { $0["id"] }
        #expect(listed == people.data?["people"]?.arrayValue?.map { $0["id"] })
        #expect(try world.cache.statistics().types["Person"] == 6)
        await world.finish()
    }
}
