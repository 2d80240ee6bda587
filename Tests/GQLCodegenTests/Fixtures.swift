import Foundation
import GQLCodegen

/// The fixture sets under Fixtures/ (a schema.graphql, documents, an optional codegen.json) and the Swift generated
/// from them under Generated/, which this test target compiles: so the generated code is compiled and run in every
/// test run, and ``GoldenTests`` checks that the generator still writes exactly those bytes.
/// `GQL_CODEGEN_UPDATE=1 swift test --filter GoldenTests` rewrites them after a deliberate change.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// GitHub's public schema (shared/corpus beside the repository; read there, never copied in).
    static let gitHubSchema = root.appendingPathComponent("../../../shared/corpus/github-schema.graphql")
        .standardizedFileURL

    static var hasGitHubSchema: Bool { FileManager.default.fileExists(atPath: gitHubSchema.path) }

    static func schemaURL(_ set: String) -> URL {
        set == "GitHub" ? gitHubSchema : root.appendingPathComponent("Fixtures/\(set)/schema.graphql")
    }

    static func schema(_ set: String) throws -> GQLCodegen.Schema {
        let url = schemaURL(set)
        return try GQLCodegen.Schema(sdl: String(contentsOf: url, encoding: .utf8), name: url.lastPathComponent)
    }

    static func documents(_ set: String) throws -> [GQLCodegen.Document] {
        let folder = root.appendingPathComponent("Fixtures/\(set)")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .filter { $0.hasSuffix(".graphql") && $0 != "schema.graphql" }
            .map {
                GQLCodegen.Document(
                    text: try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8), name: $0)
            }
    }

    static func configuration(_ set: String) throws -> GQLCodegen.Configuration {
        let url = root.appendingPathComponent("Fixtures/\(set)/codegen.json")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return .init() }
        return try GQLCodegen.Configuration(json: text, name: "codegen.json")
    }

    static func generate(_ set: String) throws -> GQLCodegen.Output {
        try GQLCodegen(configuration: configuration(set)).generate(schema: schema(set), documents: documents(set))
    }

    static func generatedFolder(_ set: String) -> URL { root.appendingPathComponent("Generated/\(set)") }
}
