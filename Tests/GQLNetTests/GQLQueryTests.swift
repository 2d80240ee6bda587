import Foundation
import GQLNet
import GraphQL
import Testing

/// Each test uses its own `GQLQuery` instance and its own temp directory, so they run in parallel.
@Suite struct GQLQueryTests {
    /// A fresh temp directory holding `files` (relative path → contents), removed by the caller via `defer`.
    private func directory(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("GQLQueryTests-\(UUID().uuidString)", isDirectory: true)
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    private func remove(_ url: URL) { try? FileManager.default.removeItem(at: url) }

    /// Names of the operations and fragments in `text`, parsed back with GraphQLSwift.
    private func definitionNames(_ text: String) throws -> [String] {
        try parse(source: text).definitions.compactMap { definition in
            if let operation = definition as? OperationDefinition { return operation.name?.value }
            if let fragment = definition as? FragmentDefinition { return fragment.name.value }
            return nil
        }
    }

    @Test func loadsDirectoriesRecursivelyAndOnlyGraphQLFiles() throws {
        let root = try directory([
            "a.graphql": "query Top { a }",
            "nested/deeper/b.gql": "mutation Deep { b }",
            "nested/c.graphql": "subscription Sub { c }",
            "nested/notes.txt": "query NotLoaded { x }",
            ".hidden/d.graphql": "query Hidden { d }",
        ])
        defer { remove(root) }
        let queries = GQLQuery()
        try queries.load(directory: root)
        #expect(queries.operationNames == ["Deep", "Sub", "Top"])
        #expect(try queries["Deep"] == "mutation Deep { b }")
        #expect(try queries.document(named: "Sub").operationType == .subscription)
        #expect(try queries.document(named: "Deep").sourceName.hasSuffix("nested/deeper/b.gql"))
        #expect(queries.contains("Top"))
        #expect(!queries.contains("NotLoaded"))
    }

    @Test func includesExactlyTheFragmentsUsedTransitively() throws {
        let root = try directory([
            "ops/create.graphql": """
            mutation CreateObject($name: String!) {
              create(name: $name) {
                ...A
                ... on Special { extra }
              }
            }
            """,
            "fragments/a.graphql": """
            fragment A on Object {
              id
              ... on Named { ...B }
            }
            fragment D on Object { unused }
            """,
            "fragments/b.graphql": """
            fragment B on Named {
              name
              owner { ...C }
            }
            """,
            "fragments/c.graphql": "fragment C on Person { email }",
        ])
        defer { remove(root) }
        let queries = GQLQuery()
        try queries.load(directory: root)

        let document = try queries.document(named: "CreateObject")
        #expect(document.fragments == ["A", "B", "C"])
        #expect(try definitionNames(document.text) == ["CreateObject", "A", "B", "C"])
        #expect(!document.text.contains("fragment D"))
        #expect(document.text.hasPrefix("mutation CreateObject($name: String!) {"))
        #expect(queries.fragmentNames == ["A", "B", "C", "D"])
    }

    @Test func sharedFragmentsAppearOnceAndResultParsesBack() throws {
        let queries = GQLQuery()
        try queries.load(
            """
            query Both { x { ...Leaf ...Mid } y { ...Leaf } }
            fragment Mid on X { ...Leaf z }
            fragment Leaf on X { id }
            """, sourceName: "inline")
        let text = try queries["Both"]
        #expect(try definitionNames(text) == ["Both", "Leaf", "Mid"])
        // The printed form of the parsed result names the same definitions: the text is a whole document.
        let printed = print(ast: try parse(source: text))
        #expect(try definitionNames(printed) == ["Both", "Leaf", "Mid"])
    }

    /// The text is sliced from the source by tokens: braces in default values, directive arguments, strings and
    /// block strings, and non-ASCII text must not end a definition early.
    @Test func keepsTheSourceTextOfEachDefinitionExactly() throws {
        let operation = """
            query Args($in: Input = {a: {b: 1}}) @dir(x: {y: "}"}) {
              # a comment with a } brace
              f(arg: {k: "é {"}) { ...G }
            }
            """
        let fragment = #"fragment G on T { g(s: """block } é""") }"#
        let queries = GQLQuery()
        try queries.load("# header\n\(operation)\n\n# between\n\(fragment)\n# trailer\n", sourceName: "exact.graphql")
        #expect(try queries["Args"] == operation + "\n\n" + fragment)
        #expect(try definitionNames(try queries["Args"]) == ["Args", "G"])
    }

    /// Lookups and loads from many tasks at once see either the old or the new state, never a torn one.
    @Test func concurrentLoadsAndLookups() async throws {
        let queries = GQLQuery()
        try queries.load("query Base { ...F }\nfragment F on Q { id }", sourceName: "base")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { try queries.load("query Op\(index) { ...F }", sourceName: "op\(index)") }
                group.addTask {
                    let text = try queries["Base"]
                    #expect(text.contains("fragment F"))
                }
            }
            try await group.waitForAll()
        }
        #expect(queries.operationNames.count == 51)
        #expect(try queries["Op49"] == "query Op49 { ...F }\n\nfragment F on Q { id }")
    }

    @Test func duplicateOperationNamesAcrossFilesNameBothFilesAndLines() throws {
        let root = try directory([
            "one.graphql": "query Same { a }",
            "two.graphql": "\n\nquery Same { b }",
        ])
        defer { remove(root) }
        let queries = GQLQuery()
        let error = gqlError { try queries.load(directory: root) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("\"Same\"") == true)
        #expect(error?.message.contains("one.graphql:1") == true)
        #expect(error?.message.contains("two.graphql:3") == true)
        #expect(queries.operationNames.isEmpty, "a failed load keeps nothing")
    }

    @Test func duplicateFragmentAgainstAnEarlierLoadIsRejected() throws {
        let queries = GQLQuery()
        try queries.load("fragment F on X { a }\nquery Q { ...F }", sourceName: "first.graphql")
        let error = gqlError {
            try queries.load("query R { b }\n\nfragment F on X { b }", sourceName: "second.graphql")
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("Fragment \"F\"") == true)
        #expect(error?.message.contains("first.graphql:1") == true)
        #expect(error?.message.contains("second.graphql:3") == true)
        #expect(queries.operationNames == ["Q"], "R from the failed load is not kept")
        #expect(try queries["Q"].contains("fragment F on X { a }"))
    }

    @Test func unknownOperationAndUnknownFragmentAreErrors() throws {
        let queries = GQLQuery()
        try queries.load("query Uses {\n  a { ...Missing }\n}", sourceName: "uses.graphql")
        let unknown = gqlError { _ = try queries["Nope"] }
        #expect(unknown?.code == .invalidArgument)
        #expect(unknown?.message.contains("\"Nope\"") == true)
        #expect(unknown?.message.contains("Uses") == true, "lists the loaded operations")

        let missing = gqlError { _ = try queries["Uses"] }
        #expect(missing?.code == .invalidArgument)
        #expect(missing?.message.contains("\"Missing\"") == true)
        #expect(missing?.message.contains("uses.graphql:2:7") == true)
        #expect(gqlError { try queries.validate() }?.message.contains("\"Missing\"") == true)

        // Loading the fragment later makes the operation resolvable (and clears the cached failure path).
        try queries.load("fragment Missing on A { id }", sourceName: "late.graphql")
        #expect(try queries["Uses"].contains("fragment Missing"))
        try queries.validate()
    }

    @Test func syntaxErrorsNameFileLineAndColumn() throws {
        let root = try directory([
            "ok.graphql": "query Fine { a }", "sub/broken.graphql": "query Broken {\n  a\n  b(\n}",
        ])
        defer { remove(root) }
        let queries = GQLQuery()
        let error = gqlError { try queries.load(directory: root) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("broken.graphql:4:1") == true, "\(error?.message ?? "")")
        #expect(error?.message.lowercased().contains("syntax error") == true)
        #expect(queries.operationNames.isEmpty)
    }

    @Test func anonymousOperationsAreRejected() throws {
        let queries = GQLQuery()
        let shorthand = gqlError { try queries.load("{ a }", sourceName: "anon.graphql") }
        #expect(shorthand?.code == .invalidArgument)
        #expect(shorthand?.message.contains("anon.graphql:1") == true)
        let unnamed = gqlError { try queries.load("query Named { a }\n\nmutation { b }", sourceName: "m.graphql") }
        #expect(unnamed?.message.contains("m.graphql:3") == true)
        #expect(queries.operationNames.isEmpty)
    }

    @Test func crlfFilesWork() throws {
        let root = try directory([
            "crlf.graphql": "query Win {\r\n  a { ...F }\r\n}\r\n\r\nfragment F on A {\r\n  id\r\n}\r\n",
            "bad.graphql": "query Ok { a }\r\n\r\nquery Ok2 {\r\n  b(\r\n}\r\n",
        ])
        defer { remove(root) }
        let queries = GQLQuery()
        let error = gqlError { try queries.load(directory: root) }
        #expect(error?.message.contains("bad.graphql:5:1") == true, "lines count CRLF once: \(error?.message ?? "")")

        try FileManager.default.removeItem(at: root.appendingPathComponent("bad.graphql"))
        try queries.load(directory: root)
        let text = try queries["Win"]
        #expect(!text.contains("\r"))
        #expect(text == "query Win {\n  a { ...F }\n}\n\nfragment F on A {\n  id\n}")
        #expect(try definitionNames(text) == ["Win", "F"])
    }

    @Test func escapedFormIsAValidJSONStringBody() throws {
        let queries = GQLQuery()
        try queries.load(
            """
            query Esc {
            \tsearch(text: "say \\"hi\\"", path: "C:\\\\dir") { id }
            }
            """, sourceName: "esc.graphql")
        let document = try queries.document(named: "Esc")
        #expect(!document.escaped.contains("\n"))
        #expect(!document.escaped.contains("\t"))
        #expect(document.escaped.contains(#"\"say \\\"hi\\\"\""#))
        let json = Data("{\"query\":\"\(document.escaped)\"}".utf8)
        let decoded = try JSONSerialization.jsonObject(with: json) as? [String: String]
        #expect(decoded?["query"] == document.text)
    }

    @Test func typeSystemDefinitionsAreSkipped() throws {
        let queries = GQLQuery()
        try queries.load("type Query { a: Int }\nschema { query: Query }\nquery A { a }", sourceName: "schema.graphql")
        #expect(queries.operationNames == ["A"])
        #expect(try queries["A"] == "query A { a }")
    }

    @Test func removeAllForgetsEverything() throws {
        let queries = GQLQuery()
        try queries.load("query A { a }\nfragment F on X { f }", sourceName: "s")
        _ = try queries["A"]
        queries.removeAll()
        #expect(queries.operationNames.isEmpty)
        #expect(queries.fragmentNames.isEmpty)
        #expect(gqlError { _ = try queries["A"] }?.code == .invalidArgument)
        try queries.load("query A { again }", sourceName: "s")
        #expect(try queries["A"] == "query A { again }")
    }

    @Test func missingDirectoryIsAnIOError() {
        let queries = GQLQuery()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("nope-\(UUID().uuidString)")
        #expect(gqlError { try queries.load(directory: missing) }?.code == .io)
    }

    @Test func bundleLoadingReadsItsResourceDirectory() throws {
        let root = try directory(["Resources/ops/b.graphql": "query FromBundle { b }"])
        defer { remove(root) }
        // A plain directory works as a bundle on every platform; its resourceURL is the directory itself on
        // Linux and `Contents/Resources` or the root elsewhere, so load what Foundation reports.
        guard let bundle = Bundle(url: root), let resources = bundle.resourceURL else {
            Issue.record("Foundation could not open a directory bundle")
            return
        }
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try Data("query InResources { r }".utf8).write(to: resources.appendingPathComponent("r.graphql"))
        let queries = GQLQuery()
        try queries.load(bundle: bundle)
        #expect(queries.contains("InResources"))
    }

    /// The static forms reach the shared registry; this is the only test that touches it, using unique names.
    @Test func staticFormsForwardToTheSharedRegistry() throws {
        let name = "Shared\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        try GQLQuery.load(
            "query \(name) { ...SharedFragment\(name) }\nfragment SharedFragment\(name) on Q { id }",
            sourceName: "shared.graphql")
        #expect(GQLQuery.operationNames.contains(name))
        #expect(try GQLQuery[name].contains("fragment SharedFragment\(name)"))
        #expect(try GQLQuery.document(named: name).fragments == ["SharedFragment\(name)"])
    }
}
