import Dispatch
import Foundation
import GQLTestSupport
import Testing

@testable import GQLCache

/// Optimistic layers: seen at once, replaced by the server's answer, rolled back when the mutation fails.
@Suite struct OptimisticTests {
    static func note(_ id: String, _ title: String, n: Int64 = 1) -> GQLValue {
        ["__typename": "Note", "id": .string(id), "title": .string(title), "n": .int(n)]
    }

    /// A server that holds each answer until the test opens its gate, so what the watchers see while the
    /// mutation is in flight is decided by the test, not by timing.
    final class GatedServer: Sendable {
        let gate = DispatchSemaphore(value: 0)
        let server: HostileServer

        init(_ reply: @escaping @Sendable () -> HostileServer.Reply) throws {
            let gate = gate
            server = try HostileServer { _, _ in
                // Bounded, so a failing test cannot leave the thread waiting for ever.
                _ = gate.wait(timeout: .now() + 20)
                return reply()
            }
        }

        func open() { gate.signal() }
    }

    /// What one gated mutation did: its outcome, and what the watcher of note 1 saw before and after the gate.
    struct InFlight {
        var outcome: Swift.Result<GQLCache.Result, any Error>
        var whileInFlight: GQLValue?
        var readWhileInFlight: GQLValue?
        var layersWhileInFlight: Int
        var afterwards: GQLValue?
        var cache: GQLCache
    }

    /// Caches note 1 as "Before", watches it, runs UpdateNote with an optimistic title against a server that
    /// answers `reply` only once the watcher has seen the optimistic title.
    static func inFlight(_ title: String, reply: @escaping @Sendable () -> HostileServer.Reply) async throws
        -> InFlight
    {
        let gated = try GatedServer(reply)
        defer { gated.server.stop() }
        let cache = try memoryCache()
        let client = GQLServer(HTTP: gated.server.url)
        try cache.write("GetNote", ["id": "1"], data: ["getNote": note("1", "Before")])
        var watch = cache.watch(client, "GetNote", ["id": "1"], policy: .cacheOnly).makeAsyncIterator()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Before")
        let mutation = Task {
            try await cache.mutate(
                client, "UpdateNote", ["input": ["id": "1", "title": title]],
                optimistic: ["updateNote": note("1", title)])
        }
        let seen = try await watch.next()?.data?["getNote"]?["title"]
        let read = try cache.read("GetNote", ["id": "1"])["getNote"]?["title"]
        let layers = cache.optimisticLayerCount
        gated.open()
        let outcome = await mutation.result
        let afterwards = try await watch.next()?.data?["getNote"]?["title"]
        try await client.shutdown()
        return InFlight(
            outcome: outcome, whileInFlight: seen, readWhileInFlight: read, layersWhileInFlight: layers,
            afterwards: afterwards, cache: cache)
    }

    @Test func theOptimisticAnswerIsSeenAtOnceThenReplacedByTheServers() async throws {
        let run = try await Self.inFlight("Saving…") {
            .json(#"{"data":{"updateNote":{"__typename":"Note","id":"1","title":"Saved","n":1}}}"#)
        }
        #expect(run.whileInFlight == "Saving…" && run.readWhileInFlight == "Saving…")
        #expect(run.layersWhileInFlight == 1)
        let result = try run.outcome.get()
        #expect(result.source == .network && result.data?["updateNote"]?["title"] == "Saved")
        #expect(run.afterwards == "Saved")
        #expect(run.cache.optimisticLayerCount == 0)
        #expect(try run.cache.record("Note:1")?["title"] == "Saved")
    }

    @Test func aRefusedMutationRollsBackWhatTheWatcherSaw() async throws {
        let run = try await Self.inFlight("Refused") { .json(#"{"data":null,"errors":[{"message":"not allowed"}]}"#) }
        #expect(run.whileInFlight == "Refused")
        #expect(try run.outcome.get().errors.first?.message == "not allowed")
        #expect(run.afterwards == "Before")
        #expect(try run.cache.read("GetNote", ["id": "1"])["getNote"]?["title"] == "Before")
        #expect(run.cache.optimisticLayerCount == 0)
    }

    @Test func aTransportFailureRollsBackAndThrows() async throws {
        let run = try await Self.inFlight("Lost") { .http(503, "unavailable", contentType: "text/plain") }
        #expect(run.whileInFlight == "Lost")
        #expect(throws: (any Error).self) { try run.outcome.get() }
        #expect(run.afterwards == "Before")
        #expect(run.cache.optimisticLayerCount == 0)
    }

    @Test func layersStackAndComeOffInAnyOrder() throws {
        let cache = try memoryCache()
        try cache.write("GetNote", ["id": "1"], data: ["getNote": Self.note("1", "Base")])
        func title() throws -> GQLValue? { try cache.read("GetNote", ["id": "1"])["getNote"]?["title"] }
        func layer(_ title: String) throws -> GQLCache.Layer {
            try cache.addOptimisticLayer(
                "UpdateNote", ["input": ["id": "1"]], data: ["updateNote": Self.note("1", title)])
        }
        let a = try layer("A")
        let b = try layer("B")
        #expect(try title() == "B")
        cache.removeOptimisticLayer(a)  // the older one first: the newer still shows
        #expect(try title() == "B")
        cache.removeOptimisticLayer(b)
        #expect(try title() == "Base")
        let c = try layer("C")
        let d = try layer("D")
        cache.removeOptimisticLayer(d)  // the newer one first: the older shows again
        #expect(try title() == "C")
        // A server write under a layer is kept, and shows once the layer comes off.
        try cache.write("GetNote", ["id": "1"], data: ["getNote": Self.note("1", "Server")])
        #expect(try title() == "C")
        cache.removeOptimisticLayer(c)
        cache.removeOptimisticLayer(c)  // twice: nothing
        #expect(try title() == "Server")
        // A record only a layer has is read from it, and is gone with it; nothing reached the table.
        let created = try cache.addOptimisticLayer(
            "CreateNote", ["input": ["id": "9"]], data: ["createNote": Self.note("9", "New", n: 9)])
        #expect(try cache.record("Note:9")?["title"] == "New")
        #expect(try cache.recordKeys().contains("Note:9") == false)
        cache.removeOptimisticLayer(created)
        #expect(try cache.record("Note:9") == nil)
    }

    /// A layer that sets some fields of a record the memory layer does not hold (a cache opened again, as after a
    /// restart) reads over the stored record, not alone: the fields it does not set come from the table. (It read
    /// as a miss of those fields, which GQLSync's outbox layers shown again at an engine's start ran into.)
    @Test func aLayerOverARecordNotInMemoryReadsOverTheStoredOne() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var configuration = GQLCache.Configuration()
        configuration.queries = try cacheTestQueries()
        let path = directory.path("cache.sqlite")
        try GQLCache(path: path, configuration: configuration)
            .write("GetNote", ["id": "1"], data: ["getNote": Self.note("1", "Base", n: 7)])
        let reopened = try GQLCache(path: path, configuration: configuration)
        _ = try reopened.addOptimisticLayer(
            "mutation($input: UpdateNoteInput!) { updateNote(input: $input) { title } }", ["input": ["id": "1"]],
            data: ["updateNote": ["__typename": "Note", "id": "1", "title": "Layer"]])
        let note = try reopened.read("GetNote", ["id": "1"])["getNote"]
        #expect(note?["title"] == "Layer" && note?["n"] == 7 && note?["id"] == "1", "\(note ?? .null)")
    }

    /// Review L11: a read with layers in place lays them over the memory layer and looks nothing up in SQLite for
    /// the records it holds, nor for a record only a layer has (an optimistic new note) while the memory layer
    /// holds every row. The answer is the layered one; its dependencies are every record it read, the new note's
    /// included. In a reopened file (the memory layer holds only what was read) a layer over a record already read
    /// costs no lookup either.
    @Test func aWarmReadUnderLayersLooksUpNothingInSQLite() throws {
        let list = "query { notes { id title n } }"
        func titles(_ cache: GQLCache) throws -> [String?] {
            try cache.read(list)["notes"]?.arrayValue?.map { $0["title"]?.stringValue } ?? []
        }
        let cache = try memoryCache()
        try cache.write(list, data: ["notes": [Self.note("1", "One"), Self.note("2", "Two")]])
        _ = try cache.addOptimisticLayer(
            list, data: ["notes": [Self.note("1", "One (saving)"), Self.note("2", "Two"), Self.note("3", "Three")]])
        let looked = cache.keysReadFromTable
        #expect(try titles(cache) == ["One (saving)", "Two", "Three"])
        let answer = try cache.cachedAnswer(try cache.operation(list), [:])
        #expect(answer.keys == ["QUERY_ROOT", "Note:1", "Note:2", "Note:3"])
        #expect(cache.keysReadFromTable == looked, "\(cache.keysReadFromTable - looked) keys looked up in SQLite")

        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let path = directory.path("cache.sqlite")
        try GQLCache(path: path).write(list, data: ["notes": [Self.note("1", "One"), Self.note("2", "Two")]])
        let reopened = try GQLCache(path: path)
        #expect(try titles(reopened) == ["One", "Two"])
        let cold = reopened.keysReadFromTable
        #expect(cold == 3)  // The cold read: the root, then both notes.
        _ = try reopened.addOptimisticLayer(
            "query { note(id: 1) { id title } }", data: ["note": ["__typename": "Note", "id": "1", "title": "Edited"]])
        #expect(try titles(reopened) == ["Edited", "Two"])
        #expect(reopened.keysReadFromTable == cold)
    }

    @Test func againstTheDevServerTheAnswerReplacesTheLayer() async throws {
        let fixture = try await CacheFixture.make()
        var watch = fixture.cache.watch(fixture.client, "GetNote", ["id": "2"]).makeAsyncIterator()
        #expect(try await watch.next()?.data?["getNote"]?["title"] == "Note 2")
        let result = try await fixture.cache.mutate(
            fixture.client, "UpdateNote", ["input": ["id": "2", "title": "Edited"]],
            optimistic: ["updateNote": Self.note("2", "Edited (saving)", n: 2)])
        #expect(result.errors.isEmpty && result.data?["updateNote"]?["title"] == "Edited")
        // The watcher may or may not have read while the layer was there; its last word is the server's.
        var last = try await watch.next()
        if last?.data?["getNote"]?["title"] == "Edited (saving)" { last = try await watch.next() }
        #expect(last?.data?["getNote"]?["title"] == "Edited")
        #expect(fixture.cache.optimisticLayerCount == 0)
        await fixture.finish()
    }

    @Test func againstTheDevServerARefusalAndAStoppedServerRollBack() async throws {
        let fixture = try await CacheFixture.make()
        _ = try await fixture.cache.fetch(fixture.client, "GetNote", ["id": "1"])
        // The server refuses: `title` must be a String.
        let refused = try await fixture.cache.mutate(
            fixture.client, "UpdateNote", ["input": ["id": "1", "title": 5] as GQLValue],
            optimistic: ["updateNote": Self.note("1", "Never")])
        #expect(!refused.errors.isEmpty)
        #expect(try fixture.cache.read("GetNote", ["id": "1"])["getNote"]?["title"] == "Note 1")
        await fixture.stopServer()
        await #expect(throws: (any Error).self) {
            try await fixture.cache.mutate(
                fixture.client, "UpdateNote", ["input": ["id": "1", "title": "Offline"]],
                optimistic: ["updateNote": Self.note("1", "Offline")])
        }
        #expect(try fixture.cache.read("GetNote", ["id": "1"])["getNote"]?["title"] == "Note 1")
        #expect(fixture.cache.optimisticLayerCount == 0)
        await fixture.finish()
    }

    /// A delivered answer's list elements take no key fields from the optimistic answer by position (review H3):
    /// the server's list, longer and in another order, is stored under the mutation's path, and the tags the
    /// optimistic answer named keep their names (before, Tag:1 took the first element's "new").
    @Test func aDeliveredListTakesNoKeysFromTheOptimisticAnswerByPosition() throws {
        let cache = try memoryCache()
        let tags = "query { tags { id name } }"
        try cache.write(
            tags,
            data: [
                "tags": [
                    ["__typename": "Tag", "id": "1", "name": "a"], ["__typename": "Tag", "id": "2", "name": "b"],
                ]
            ])
        let mutation = "mutation { tags { name } }"
        for shape: GQLValue in [
            ["tags": [["__typename": "Tag", "id": "1", "name": "a"], ["id": "2", "name": "b"]]],
            ["tags": [["__typename": "Tag", "id": "1", "name": "a"], ["__typename": "Tag", "id": "2", "name": "b"]]],
        ] {
            try cache.storeDelivered(
                ["tags": [["name": "new"], ["name": "a"], ["name": "b"]]], of: mutation, GQLValues(), shape: shape,
                evicting: false, replacing: nil)
            #expect(try cache.record("Tag:1")?["name"] == "a", "\(shape)")
            #expect(try cache.record("Tag:2")?["name"] == "b", "\(shape)")
            // The layer's elements all name `Tag`: the stored elements take it and read back (elements with no
            // `__typename` at all are stored, but a read of the text, which asks for it, misses them).
            guard shape["tags"]?[1]?["__typename"] != nil else { continue }
            let names = try cache.read(mutation)["tags"]?.arrayValue?.map { $0["name"] }
            #expect(names == ["new", "a", "b"], "\(shape)")
        }
    }
}
