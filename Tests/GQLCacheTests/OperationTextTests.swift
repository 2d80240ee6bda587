import Testing

@testable import GQLCache

/// The text the cache sends: `__typename` in every selection set below the root, nothing else touched.
@Suite struct OperationTextTests {
    @Test func typenameIsAddedBelowTheRootOnly() throws {
        let operation = try CacheOperation(
            text: """
                query Q($s: String = "{ not a brace }") {
                  a(s: "ünï©ødé 🎉 { }") { b { __typename c } ... on A { d { e } } ...F }
                  # a comment with { a brace }
                  z
                }
                fragment F on A { f { g } }
                """)
        #expect(
            operation.text == """
                query Q($s: String = "{ not a brace }") {
                  a(s: "ünï©ødé 🎉 { }") { __typename b { __typename c } ... on A { __typename d { __typename e } } ...F }
                  # a comment with { a brace }
                  z
                }
                fragment F on A { __typename f { __typename g } }
                """)
        #expect(operation.kind == .query && operation.name == "Q")
        #expect(operation.defaults == ["s": "{ not a brace }"])
    }

    @Test func aUnicodeLiteralArgumentKeysItsField() throws {
        let cache = try memoryCache()
        let query = #"query { user(id: "ünï©ødé 🎉") { id name } }"#
        try cache.write(query, data: ["user": ["__typename": "User", "id": "ünï©ødé 🎉", "name": "U"]])
        // The field key's argument is ASCII JSON (characters past ASCII as UTF-16 escapes); the record key is the id.
        let fieldKey = #"user({"id":"\u00fcn\u00ef\u00a9\u00f8d\u00e9 \ud83c\udf89"})"#
        #expect(try cache.record("QUERY_ROOT")?[fieldKey] == ["__ref": "User:ünï©ødé 🎉"])
        #expect(try cache.read(query)["user"]?["name"] == "U")
    }
}
