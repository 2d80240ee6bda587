import Foundation
import GQLCodegen
import GQLCore
import GQLTestSupport
import Testing

/// Hostile schemas and documents give a clear error or valid Swift: never a crash, a hang or uncompilable output.
/// (The Swift for Swift keywords and names that differ only in case is compiled in this target: see
/// Fixtures/Hostile and Generated/Hostile.)
@Suite struct HostileTests {
    static func schema() throws -> GQLCodegen.Schema {
        try GQLCodegen.Schema(
            sdl: "type Query { node: Node }\ntype Node { id: ID! child: Node name: String }", name: "schema.graphql")
    }

    func generate(_ text: String, schema: GQLCodegen.Schema? = nil) throws -> GQLCodegen.Output {
        try GQLCodegen().generate(
            schema: schema ?? Self.schema(), documents: [.init(text: text, name: "hostile.graphql")])
    }

    @Test func twoThousandDeepNestingIsRefusedBeforeParsing() {
        let text =
            "query Deep { " + String(repeating: "node { child { ", count: 1000) + "id"
            + String(repeating: " } }", count: 1000) + " }"
        #expect {
            try generate(text)
        } throws: { error in
            (error as? GQLCodegen.Failure)?.description
                == "hostile.graphql:1:\(13 + 15 * 33 + 6): error: nested deeper than 100 levels; the generator refuses it"
                || String(describing: error).contains("nested deeper than 100 levels")
        }
        // In a schema too.
        let schemaText =
            "type Query { a: " + String(repeating: "[", count: 2000) + "Int" + String(repeating: "]", count: 2000)
            + " }"
        #expect(throws: GQLCodegen.Failure.self) { try GQLCodegen.Schema(sdl: schemaText, name: "deep.graphql") }
    }

    @Test func fragmentCyclesAreNamed() {
        let text = """
            query Q { node { ...A } }
            fragment A on Node { id child { ...B } }
            fragment B on Node { name child { ...A } }
            fragment C on Node { ...C }
            """
        #expect {
            try generate(text)
        } throws: { error in
            let description = String(describing: error)
            return description.contains("hostile.graphql:3:38: error: the fragment A spreads itself: A → B → A")
                && description.contains("hostile.graphql:4:25: error: the fragment C spreads itself: C → C")
        }
    }

    @Test func tenThousandFieldsGenerateOnePropertyEach() throws {
        let fields = (0..<10_000).map { "f\($0): String" }.joined(separator: " ")
        let schema = try GQLCodegen.Schema(
            sdl: "type Query { wide: Wide }\ntype Wide { \(fields) }", name: "wide.graphql")
        let selection = (0..<10_000).map { "f\($0)" }.joined(separator: " ")
        let output = try generate("query Wide { wide { \(selection) } }", schema: schema)
        let text = try #require(output.files["hostile.graphql.swift"])
        #expect(text.components(separatedBy: "public var f").count - 1 == 10_000)
    }

    @Test func namesDifferingOnlyInCaseGetDistinctSwiftNames() throws {
        let schema = try GQLCodegen.Schema(
            sdl: "type Query { item: Item Item: Item }\ntype Item { a: E }\nenum E { ON on On }", name: "s.graphql")
        let output = try generate("query Case { item { a } Item { a } }", schema: schema)
        let operation = try #require(output.files["hostile.graphql.swift"])
        #expect(operation.contains("public var item: Item_?"))
        #expect(operation.contains("public var Item: Item__?"))
        let enumeration = try #require(output.files["SchemaTypes.graphql.swift"])
        #expect(
            enumeration.contains("case ON\n") && enumeration.contains("case on\n") && enumeration.contains("case On\n"))
    }

    @Test func seededRandomBytesNeverCrashTheGenerator() throws {
        var generator = SplitMix64(seed: TestSeed.make("HostileTests.randomBytes"))
        let alphabet = Array("query Q{node child id name}fragment on ...@$:()[]!\"#\n 0123456789")
        for _ in 0..<300 {
            let length = Int.random(in: 0..<200, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? " " })
            do { _ = try generate(text) } catch is GQLCodegen.Failure {}
        }
    }
}
