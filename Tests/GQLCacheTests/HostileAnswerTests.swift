import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// Answers no honest server sends: each is a clear error or a correct cache, never a crash or a hang.
@Suite struct HostileAnswerTests {
    /// A query `depth` levels of `n { id … }` deep, and its answer: objects `N:1` … `N:depth`, each holding the next.
    static func chain(_ depth: Int) -> (query: String, answer: GQLValue) {
        let query =
            "query { " + String(repeating: "n { id ", count: depth) + String(repeating: "}", count: depth) + " }"
        var data: GQLValue = ["__typename": "N", "id": .string("\(depth)")]
        for level in stride(from: depth - 1, through: 1, by: -1) {
            data = ["__typename": "N", "id": .string("\(level)"), "n": data]
        }
        return (query, ["n": data])
    }

    @Test func fiftyLevelsDeep() throws {
        let cache = try memoryCache()
        let depth = 50
        let (query, answer) = Self.chain(depth)
        try cache.write(query, data: answer)
        #expect(try cache.recordKeys().count == depth + 1)
        #expect(try cache.read(query) == answer)
        // One level more than the answer holds is a miss naming the path, 50 steps down.
        let deeper =
            "query { " + String(repeating: "n { id ", count: depth + 1) + String(repeating: "}", count: depth + 1)
            + " }"
        let miss = #expect(throws: GQLError.self) { try cache.read(deeper) }
        #expect(miss?.message.contains(Array(repeating: "n", count: depth + 1).joined(separator: ".")) == true)
    }

    @Test func selectionsDeeperThanTheLimitAreRefused() throws {
        let cache = try memoryCache()
        let depth = 300
        let query =
            "query { " + String(repeating: "n { ", count: depth) + "id" + String(repeating: " }", count: depth) + " }"
        let error = #expect(throws: GQLError.self) { try cache.read(query) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func anObjectReferencingItself() throws {
        let cache = try memoryCache()
        let query = "query { me { id name me2: self { id name self { id } } } }"
        try cache.write(
            query,
            data: [
                "me": [
                    "__typename": "User", "id": "1", "name": "Ada",
                    "me2": [
                        "__typename": "User", "id": "1", "name": "Ada", "self": ["__typename": "User", "id": "1"],
                    ],
                ]
            ])
        #expect(try cache.record("User:1")?["self"] == ["__ref": "User:1"])
        let data = try cache.read(query)
        #expect(data["me"]?["me2"]?["self"]?["id"] == "1")
    }

    @Test func aMissingOrNullKeyFieldStoresTheObjectUnderItsPath() throws {
        let cache = try memoryCache { $0.keyFields = ["Post": ["slug"]] }
        let query = "query { a { id v } b { id v } post { slug v } }"
        let data: GQLValue = [
            "a": ["__typename": "User", "id": nil, "v": 1], "b": ["__typename": "User", "v": 2],
            "post": ["__typename": "Post", "slug": nil, "v": 3],
        ]
        try cache.write(query, data: data)
        #expect(try cache.recordKeys() == ["QUERY_ROOT", "QUERY_ROOT.a", "QUERY_ROOT.b", "QUERY_ROOT.post"])
        // The field the answer left out is a miss naming it; everything else reads back.
        let miss = #expect(throws: GQLError.self) { try cache.read(query) }
        #expect(miss?.message.contains("`b.id`") == true, "\(miss?.message ?? "")")
        #expect(try cache.read("query { a { id v } b { v } post { slug v } }") == data)
    }

    @Test func aTypenameChangingForTheSameId() throws {
        let cache = try memoryCache()
        let query = "query { thing { id v } }"
        try cache.write(query, data: ["thing": ["__typename": "User", "id": "1", "v": 1]])
        try cache.write(query, data: ["thing": ["__typename": "Admin", "id": "1", "v": 2]])
        #expect(try cache.record("User:1")?["v"] == 1)
        #expect(try cache.record("Admin:1")?["v"] == 2)
        #expect(try cache.read(query) == ["thing": ["__typename": "Admin", "id": "1", "v": 2]])
    }

    @Test func valuesOfTheWrongKindAreClearErrors() throws {
        let cache = try memoryCache()
        let query = "query { note { id title } }"
        let scalar = #expect(throws: GQLError.self) { try cache.write(query, data: ["note": "not an object"]) }
        #expect(scalar?.code == .invalidResponse && scalar?.message.contains("`note`") == true)
        let nested = #expect(throws: GQLError.self) {
            try cache.write("query { list { id } }", data: ["list": [["__typename": "A", "id": "1"], 5]])
        }
        #expect(nested?.message.contains("`list.1`") == true, "\(nested?.message ?? "")")
        #expect(throws: GQLError.self) { try cache.write(query, data: [1, 2]) }
        // Nothing of a refused answer was stored.
        #expect(try cache.recordKeys().isEmpty)
    }

    @Test func aLargeAnswerIsBatchedUnderTheParameterLimit() throws {
        let cache = try memoryCache()
        let count = 1_500
        let query = "query { posts { id title author { id name } } }"
        let posts = (0..<count).map { i -> GQLValue in
            [
                "__typename": "Post", "id": .string("p\(i)"), "title": .string("Post \(i)"),
                "author": ["__typename": "User", "id": .string("u\(i % 10)"), "name": .string("User \(i % 10)")],
            ]
        }
        try cache.write(query, data: ["posts": .array(posts)])
        #expect(try cache.recordKeys().count == count + 10 + 1)
        #expect(try cache.read(query) == ["posts": .array(posts)])
    }
}

/// Hostile answers over the wire, from a stand-in server on 127.0.0.1.
@Suite struct HostileServerAnswerTests {
    static let query = "query { note(id: 1) { id title } }"

    @Test func aWrongShapeFromTheServerIsAClearErrorAndStoresNothing() async throws {
        let server = try HostileServer { _, _ in .json(#"{"data": {"note": [1, 2]}}"#) }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let error = await #expect(throws: GQLError.self) {
            try await cache.fetch(client, Self.query, policy: .networkOnly)
        }
        #expect(error?.code == .invalidResponse && error?.message.contains("`note.0`") == true)
        #expect(try cache.recordKeys().isEmpty)
        // The text sent asked for `__typename` below the root.
        #expect(server.bodies.first?.contains("__typename") == true)
        try await client.shutdown()
    }

    @Test func networkFirstFallsBackOnAServerError() async throws {
        let server = try HostileServer { _, _ in .http(500, #"{"error": "down"}"#) }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        try cache.write(Self.query, data: ["note": ["__typename": "Note", "id": "1", "title": "kept"]])
        let result = try await cache.fetch(client, Self.query, policy: .networkFirst)
        #expect(result.source == .cache && result.data?["note"]?["title"] == "kept")
        #expect(server.requestCount == 1)
        try await client.shutdown()
    }

    /// The issue's hostile answers as a server sends them, each through `fetch`: 50 levels deep, an object that
    /// references itself, key fields missing or null, a `__typename` that changes for the same id. Each is stored
    /// and read back as sent (or, for the missing key, a miss naming the field the answer left out).
    @Test func theHostileAnswersFromAServerMakeACorrectCache() async throws {
        let deep = HostileAnswerTests.chain(50)
        let me: GQLValue = [
            "__typename": "User", "id": "1", "name": "Ada",
            "self": ["__typename": "User", "id": "1", "name": "Ada", "self": ["__typename": "User", "id": "1"]],
        ]
        let keyless: GQLValue = [
            "a": ["__typename": "User", "id": nil, "v": 1], "b": ["__typename": "User", "v": 2],
        ]
        let cases: [(query: String, data: GQLValue)] = [
            (deep.query, deep.answer),
            ("query { me { id name self { id name self { id } } } }", ["me": me]),
            ("query { a { id v } b { id v } }", keyless),
            ("query { thing { id v } }", ["thing": ["__typename": "User", "id": "7", "v": 1]]),
            ("query { thing { id v } }", ["thing": ["__typename": "Admin", "id": "7", "v": 2]]),
        ]
        let bodies = try cases.map { try GQLValue.object(["data": $0.data]).jsonString() }
        let server = try HostileServer { index, _ in .json(bodies[min(index, bodies.count - 1)]) }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        for (query, data) in cases {
            let fetched = try await cache.fetch(client, query, policy: .networkOnly)
            #expect(fetched.data == data)
            if query.contains("b { id v }") {
                let miss = await #expect(throws: GQLError.self) {
                    try await cache.fetch(client, query, policy: .cacheOnly)
                }
                #expect(miss?.code == .cacheMiss && miss?.message.contains("`b.id`") == true)
                #expect(try cache.read("query { a { id v } b { v } }") == data)
            } else {
                #expect(try await cache.fetch(client, query, policy: .cacheOnly).data == data)
            }
        }
        #expect(try cache.record("User:1")?["self"] == ["__ref": "User:1"])
        #expect(
            try cache.record("N:50") != nil && cache.record("User:7")?["v"] == 1 && cache.record("Admin:7")?["v"] == 2)
        #expect(server.requestCount == cases.count)
        try await client.shutdown()
    }

    @Test func anAnswerWithErrorsIsReturnedButNotStored() async throws {
        let server = try HostileServer { _, _ in
            .json(
                #"{"data": {"note": {"__typename": "Note", "id": "1", "title": "partial"}}, "errors": [{"message": "boom"}]}"#
            )
        }
        defer { server.stop() }
        let client = GQLServer(HTTP: server.url)
        let cache = try memoryCache()
        let result = try await cache.fetch(client, Self.query)
        #expect(result.source == .network && result.errors.map(\.message) == ["boom"])
        #expect(try cache.recordKeys().isEmpty)
        try await client.shutdown()
    }
}
