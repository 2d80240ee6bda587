import Foundation
import GQLCache
import GQLTestSupport
import Testing

/// How answers become records and come back, with `write` and `read` (the path every network answer takes).
@Suite struct NormalizationTests {
    @Test func objectsWithKeysBecomeRecordsReferencedFromTheirParents() throws {
        let cache = try memoryCache()
        let query = "query { me { id name friends { id name } best: friend(rank: 1) { id name } } }"
        try cache.write(
            query,
            data: [
                "me": [
                    "__typename": "User", "id": "1", "name": "Ada",
                    "friends": [["__typename": "User", "id": "2", "name": "Bob"]],
                    "best": ["__typename": "User", "id": "2", "name": "Bob"],
                ]
            ])
        #expect(try cache.recordKeys() == ["QUERY_ROOT", "User:1", "User:2"])
        let root = try #require(try cache.record("QUERY_ROOT"))
        #expect(root["me"] == ["__ref": "User:1"])
        let me = try #require(try cache.record("User:1"))
        #expect(me["friends"] == [["__ref": "User:2"]])
        #expect(me["friend({\"rank\":1})"] == ["__ref": "User:2"])
        // `__typename` was added to the selection, so the answer read back has it too.
        let data = try cache.read(query)
        #expect(data["me"]?["best"]?["name"] == "Bob")
        #expect(data["me"]?["__typename"] == "User")
    }

    @Test func answersReadFromTheCacheKeepTheSelectionsOrder() throws {
        let cache = try memoryCache()
        try cache.write(
            "query { me { id name age } }",
            data: ["me": ["__typename": "User", "id": "1", "name": "Ada", "age": 36]])
        // Another order, a fragment in the middle, an alias: the answer follows the query read, not the records.
        let data = try cache.read("query { me { age ... on User { name } years: age id } }")
        #expect(data["me"]?.objectValue?.keys == ["__typename", "age", "name", "years", "id"])
        #expect(
            try data.jsonString() == #"{"me":{"__typename":"User","age":36,"name":"Ada","years":36,"id":"1"}}"#)
    }

    @Test func aRecordInTheSelectionsOrderOnlyAtFirstIsReadWhole() throws {
        let cache = try memoryCache()
        // The record holds `id best age extra` (and `name` from the second write): a read of `id best name` matches
        // it in order up to `best`, a nested object, and then not.
        try cache.write(
            "query { me { id best { id name } age extra } }",
            data: [
                "me": [
                    "__typename": "User", "id": "1", "best": ["__typename": "User", "id": "2", "name": "Bob"],
                    "age": 36, "extra": ["k": 1],
                ]
            ])
        try cache.write("query { me { id name } }", data: ["me": ["__typename": "User", "id": "1", "name": "Ada"]])
        let data = try cache.read("query { me { id best { name } name } }")
        #expect(data["me"]?.objectValue?.keys == ["__typename", "id", "best", "name"])
        #expect(
            try data.jsonString()
                == #"{"me":{"__typename":"User","id":"1","best":{"__typename":"User","name":"Bob"},"name":"Ada"}}"#)
        // In order up to a field the record lacks: the miss names it, after the nested object before it was read.
        let miss = #expect(throws: GQLError.self) { try cache.read("query { me { id best { name } nickname } }") }
        #expect(miss?.code == .cacheMiss && miss?.message.contains("`me.nickname`") == true)
        // A record that is exactly a selection's leaves is the answer's object; one with a member more is rebuilt.
        let exact = try cache.read("query { me { best { id name } } }")
        #expect(exact["me"]?["best"] == ["__typename": "User", "id": "2", "name": "Bob"])
        let fewer = try cache.read("query { me { best { name } } }")
        #expect(fewer["me"]?["best"]?.objectValue?.keys == ["__typename", "name"])
    }

    @Test func aliasesReadTheFieldTheyNameAndArgumentsMakeFieldsOfTheirOwn() throws {
        let cache = try memoryCache()
        let both = """
            query { a: note(id: "1") { id title } b: note(id: "2") { id title } }
            """
        try cache.write(
            both,
            data: [
                "a": ["__typename": "Note", "id": "1", "title": "one"],
                "b": ["__typename": "Note", "id": "2", "title": "two"],
            ])
        let root = try #require(try cache.record("QUERY_ROOT"))
        #expect(root["note({\"id\":\"1\"})"] == ["__ref": "Note:1"])
        #expect(root["note({\"id\":\"2\"})"] == ["__ref": "Note:2"])
        // Another alias, or none, reads the same field; a variable resolves to the same key.
        let plain = try cache.read("query($id: ID) { note(id: $id) { title } }", ["id": "2"])
        #expect(plain["note"]?["title"] == "two")
        let aliased = try cache.read(#"query { other: note(id: "1") { title } }"#)
        #expect(aliased["other"]?["title"] == "one")
        // Argument order does not matter; nested input objects are keyed by sorted member names.
        try cache.write(
            #"query { search(where: {b: 1, a: "x"}, first: 2) { id } }"#,
            data: ["search": [["__typename": "Note", "id": "1"]]])
        let reordered = try cache.read(
            #"query($n: Int) { search(first: $n, where: {a: "x", b: 1}) { title } }"#, ["n": 2])
        #expect(reordered["search"]?[0]?["title"] == "one")
        #expect(try cache.record("QUERY_ROOT")?["search({\"first\":2,\"where\":{\"a\":\"x\",\"b\":1}})"] != nil)
    }

    @Test func variablesNotGivenAreLeftOutAndDefaultsCount() throws {
        let cache = try memoryCache()
        try cache.write(
            "query($limit: Int = 5, $after: String) { items(limit: $limit, after: $after) { id } }",
            data: ["items": []])
        #expect(try cache.record("QUERY_ROOT")?["items({\"limit\":5})"] == .array([]))
        #expect(try cache.read("query { items(limit: 5) { id } }")["items"] == .array([]))
    }

    @Test func fragmentsApplyByExactTypeOrPossibleTypes() throws {
        let cache = try memoryCache { $0.possibleTypes = ["Node": ["User"]] }
        let query = """
            query { search { ...UserBits ... on Post { id title } ... on Node { id } } }
            fragment UserBits on User { id name }
            """
        try cache.write(
            query,
            data: [
                "search": [
                    ["__typename": "User", "id": "1", "name": "Ada"],
                    ["__typename": "Post", "id": "p", "title": "Hi"],
                ]
            ])
        #expect(try cache.record("User:1")?["name"] == "Ada")
        #expect(try cache.record("Post:p")?["title"] == "Hi")
        #expect(try cache.record("Post:p")?["name"] == nil)
        let data = try cache.read(query)
        #expect(data["search"]?[0]?["name"] == "Ada" && data["search"]?[0]?["title"] == nil)
        #expect(data["search"]?[1]?["title"] == "Hi" && data["search"]?[1]?["name"] == nil)
        #expect(
            data == [
                "search": [
                    ["__typename": "User", "id": "1", "name": "Ada"], ["__typename": "Post", "id": "p", "title": "Hi"],
                ]
            ])
    }

    @Test func includeAndSkipFollowTheirVariables() throws {
        let cache = try memoryCache()
        let query = "query($full: Boolean!) { note { id title body @include(if: $full) n @skip(if: $full) } }"
        try cache.write(
            query, ["full": false], data: ["note": ["__typename": "Note", "id": "1", "title": "t", "n": 3]])
        #expect(try cache.read(query, ["full": false])["note"]?["n"] == 3)
        let miss = #expect(throws: GQLError.self) { try cache.read(query, ["full": true]) }
        #expect(miss?.message.contains("`note.body`") == true, "\(miss?.message ?? "")")
    }

    @Test func nestedListsOfObjectsAndOfScalars() throws {
        let cache = try memoryCache()
        let query = "query { grid { cells { x y } } tags matrix rows { id } }"
        let data: GQLValue = [
            "grid": [
                "__typename": "Grid",
                "cells": [
                    [["__typename": "Cell", "x": 0, "y": 0], nil], [], [["__typename": "Cell", "x": 1, "y": 1]],
                ],
            ],
            "tags": ["a", "b"], "matrix": [[1, 2], [3]],
            "rows": [["__typename": "Row", "id": "r1"], ["__typename": "Row", "id": "r2"]],
        ]
        try cache.write(query, data: data)
        #expect(try cache.read(query) == data)
        // Keyless objects live under their parent's path, with an index per list.
        #expect(try cache.record("QUERY_ROOT.grid.cells.0.0")?["x"] == 0)
        #expect(try cache.record("QUERY_ROOT.grid.cells.2.0")?["y"] == 1)
        #expect(try cache.record("QUERY_ROOT")?["tags"] == ["a", "b"])
    }

    @Test func objectValuedScalarsAreNotMistakenForReferences() throws {
        let cache = try memoryCache()
        let query = "query { note { id meta list } }"
        let data: GQLValue = [
            "note": [
                "__typename": "Note", "id": "1", "meta": ["__ref": "User:1", "deep": ["a": [1, ["b": nil]]]],
                "list": [["__value": 1], ["k": "v"]],
            ]
        ]
        try cache.write(query, data: data)
        #expect(try cache.read(query) == data)
    }

    @Test func idsWithQuotesDotsColonsAndUnicodeAreKeysOfTheirOwn() throws {
        let cache = try memoryCache()
        let ids = ["a.b", "a", "x:y", "say \"hi\"", "ünï©ødé 🎉", "back\\slash", "c,d", "a\\.b", ""]
        for id in ids {
            try cache.write(
                "query($id: ID!) { user(id: $id) { id name child { label } } }", ["id": id],
                data: [
                    "user": [
                        "__typename": "User", "id": .string(id), "name": .string("name of \(id)"),
                        "child": ["__typename": "Child", "label": .string("child of \(id)")],
                    ]
                ])
        }
        for id in ids {
            let data = try cache.read("query($id: ID!) { user(id: $id) { name child { label } } }", ["id": id])
            #expect(data["user"]?["name"] == .string("name of \(id)"))
            #expect(data["user"]?["child"]?["label"] == .string("child of \(id)"))
        }
        // User "a" has a keyless child under `User:a.child`; user "a.b" is `User:a\.b`: no collision.
        #expect(try cache.record(GQLCache.key("User", "a.b"))?["name"] == "name of a.b")
        #expect(GQLCache.key("User", "a.b") == #"User:a\.b"#)
        #expect(try cache.record("User:a.child")?["label"] == "child of a")
        let keys = try cache.recordKeys()
        #expect(Set(keys).count == keys.count)
    }

    @Test func keyFieldsPerTypeAndThroughAliases() throws {
        let cache = try memoryCache { $0.keyFields = ["Post": ["author", "slug"]] }
        try cache.write(
            "query { post { author slug title } thing { key: objectId v } }",
            data: [
                "post": ["__typename": "Post", "author": "ada", "slug": "hello.world", "title": "Hello"],
                "thing": ["__typename": "Thing", "key": "t1", "v": 1],
            ])
        #expect(try cache.record(#"Post:ada,hello\.world"#)?["title"] == "Hello")
        #expect(try cache.record("Thing:t1")?["objectId"] == "t1")
        // Integer ids and `_id`.
        try cache.write(
            "query { a { id } b { _id } }",
            data: ["a": ["__typename": "A", "id": 7], "b": ["__typename": "B", "_id": "m"]])
        #expect(try cache.record("A:7") != nil && cache.record("B:m") != nil)
    }

    /// The initializers' `keyFields:` argument, as the issue spells it: `GQLCache(…, keyFields: ["Post": [...]])`.
    @Test func theInitializersTakeKeyFields() throws {
        let directory = try TemporaryDirectory(prefix: "gqlcache")
        defer { directory.cleanup() }
        let keyFields = ["Post": ["author", "slug"]]
        let caches = [
            try GQLCache(inMemory: true, keyFields: keyFields),
            try GQLCache(path: directory.path("own.sqlite"), keyFields: keyFields),
            try GQLCache(database: GQLDatabase(path: directory.path("app.sqlite")), keyFields: keyFields),
        ]
        for cache in caches {
            try cache.write(
                "query { post { author slug title } }",
                data: ["post": ["__typename": "Post", "author": "ada", "slug": "hello", "title": "Hello"]])
            #expect(try cache.record("Post:ada,hello")?["title"] == "Hello")
            #expect(try cache.read("query { post { title } }") == ["post": ["__typename": "Post", "title": "Hello"]])
        }
    }

    @Test func recordsMergeFieldByField() throws {
        let cache = try memoryCache()
        try cache.write(
            "query { n1: note(id: 1) { id title } }", data: ["n1": ["__typename": "Note", "id": "1", "title": "t"]])
        try cache.write(
            "query { note(id: 1) { id body } }", data: ["note": ["__typename": "Note", "id": "1", "body": "b"]])
        let data = try cache.read("query { note(id: 1) { title body } }")
        #expect(data == ["note": ["__typename": "Note", "title": "t", "body": "b"]])
    }

    @Test func evictAndClear() throws {
        let cache = try memoryCache()
        let query = "query { note(id: 1) { id title } }"
        try cache.write(query, data: ["note": ["__typename": "Note", "id": "1", "title": "t"]])
        #expect(try cache.evict(key: "Note:1"))
        #expect(try cache.evict(key: "Note:1") == false)
        let miss = #expect(throws: GQLError.self) { try cache.read(query) }
        #expect(miss?.code == .cacheMiss && miss?.message.contains("Note:1") == true)
        try cache.write(query, data: ["note": ["__typename": "Note", "id": "1", "title": "t"]])
        try cache.clear()
        #expect(try cache.recordKeys().isEmpty)
        #expect(throws: GQLError.self) { try cache.read(query) }
    }

    @Test func badOperationsAreClearErrors() throws {
        let cache = try memoryCache()
        let cases = [
            "query { a { ...Missing } }", "query { a }  query Other { b }", "query { a { ",
            "fragment F on A { ...F } query { a { ...F } }",
        ]
        for text in cases {
            let error = #expect(throws: GQLError.self) { try cache.write(text, data: ["a": nil]) }
            #expect(error?.code == .invalidArgument, "\(text): \(String(describing: error))")
        }
    }
}
