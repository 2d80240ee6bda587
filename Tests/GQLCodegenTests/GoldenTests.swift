import Foundation
import GQLCodegen
import Testing

/// The generated Swift this target compiles is what the generator writes today, byte for byte (deterministic
/// output), for the blog schema, the hostile names, AppSync's @model types and GitHub's public schema.
@Suite struct GoldenTests {
    static let update = ProcessInfo.processInfo.environment["GQL_CODEGEN_UPDATE"] == "1"

    func check(_ set: String) throws {
        let output = try Fixtures.generate(set)
        let folder = Fixtures.generatedFolder(set)
        if Self.update {
            try output.write(to: folder)
            return
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(Set(present) == Set(output.files.keys), "run GQL_CODEGEN_UPDATE=1 swift test --filter GoldenTests")
        for (name, text) in output.files {
            let compiled = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(compiled == text, "\(set)/\(name) differs from what the generator writes now")
        }
        // Same input, same bytes.
        #expect(try Fixtures.generate(set) == output)
    }

    @Test func blog() throws { try check("Blog") }

    @Test func hostileNames() throws { try check("Hostile") }

    @Test func models() throws { try check("Models") }

    @Test func conditions() throws { try check("Conditions") }

    @Test(.enabled(if: Fixtures.hasGitHubSchema, "needs ../shared/corpus/github-schema.graphql beside the repository"))
    func gitHub() throws { try check("GitHub") }
}
