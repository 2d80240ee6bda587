import Foundation
import GQLStore
import Testing

/// `gql-cli documents list|show DIR` on a real folder of .graphql files.
@Suite(.timeLimit(.minutes(2)))
struct DocumentsCommandTests {
    /// A folder with an operation using a fragment that uses another, an unused fragment, and a subfolder.
    static func sampleFolder() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: directory.path("nested"), withIntermediateDirectories: true)
        let objects = """
            mutation CreateObject($input: CreateObjectsInput!) {
              createObjects(input: $input) { ...ObjectFields }
            }

            fragment ObjectFields on Objects { objectId text ...Versioned }
            """
        let fragments = """
            fragment Versioned on Objects { _version _lastChangedAt }
            fragment Unused on Objects { double }
            """
        let list = "query ListObjects { listObjects { items { objectId } } }\n"
        try Data(objects.utf8).write(to: URL(fileURLWithPath: directory.path("objects.graphql")))
        try Data(fragments.utf8).write(to: URL(fileURLWithPath: directory.path("nested/fragments.graphql")))
        try Data(list.utf8).write(to: URL(fileURLWithPath: directory.path("nested/list.gql")))
        return directory
    }

    @Test func listNamesEachOperationWithItsFragmentsAndPlace() async throws {
        let folder = try Self.sampleFolder()
        let text = try await CLIProcess.succeed(["documents", "list", folder.url.path])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("CreateObject  mutation uses ObjectFields, Versioned  ("))
        #expect(lines[0].hasSuffix("objects.graphql:1)"))
        #expect(lines[1].hasPrefix("ListObjects  query  ("))
        let json = try await CLIProcess.succeed(["documents", "list", folder.url.path, "--json"])
        let value = try GQLValue(json: json.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(value[0]?["name"] == "CreateObject")
        #expect(value[0]?["fragments"] == ["ObjectFields", "Versioned"])
        #expect(value[1]?["type"] == "query")
    }

    @Test func showPrintsTheOperationWithExactlyItsFragments() async throws {
        let folder = try Self.sampleFolder()
        let text = try await CLIProcess.succeed(["documents", "show", folder.url.path, "CreateObject"])
        #expect(text.contains("mutation CreateObject"))
        #expect(text.contains("fragment ObjectFields on Objects"))
        #expect(text.contains("fragment Versioned on Objects"))
        #expect(!text.contains("Unused"))
        #expect(!text.contains("ListObjects"))
        let escaped = try await CLIProcess.succeed(["documents", "show", folder.url.path, "ListObjects", "--escaped"])
        #expect(
            escaped.trimmingCharacters(in: .whitespacesAndNewlines)
                == #"query ListObjects { listObjects { items { objectId } } }"#)
    }

    @Test func unknownOperationsMissingFoldersAndSyntaxErrorsAreReported() async throws {
        let folder = try Self.sampleFolder()
        let unknown = try await CLIProcess.fail(["documents", "show", folder.url.path, "Nope"])
        #expect(unknown.contains("Nope"))
        let missing = try await CLIProcess.fail(["documents", "list", folder.path("absent")])
        #expect(missing.contains("no folder at"))
        try Data("query Broken { listObjects {".utf8).write(to: URL(fileURLWithPath: folder.path("broken.graphql")))
        let broken = try await CLIProcess.fail(["documents", "list", folder.url.path])
        #expect(broken.contains("broken.graphql:1"))
    }
}
