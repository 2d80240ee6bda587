import Foundation
import GQLCodegen
import GQLCore
import GQLNet

/// The typed-operations step of `gql-cli demo`: the dev server's schema introspected (what `gql-cli codegen --url`
/// does), Swift generated in-process for a small `.graphql` document, the generated type's outline printed, and the
/// operation's document run against the server. The generated code is not compiled into gql-cli, so the step shows
/// the call an app makes with it rather than making it.
struct DemoCodegenTour: DemoStep {
    static let documentName = "RecentObjects.graphql"
    static let document = """
        query RecentObjects($limit: Int) { listObjects(limit: $limit) { items { objectId text number } } }
        """

    func run() async throws {
        heading("9. Typed operations from .graphql files (GQLCodegen, gql-cli codegen)")
        let server = try await startServer()
        let client = GQLServer(HTTP: server.url)
        do {
            try await tour(client, url: server.url)
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }

    private func tour(_ client: GQLServer, url: String) async throws {
        let introspected = try await client.query(GQLCodegen.Schema.introspectionQuery)
        guard introspected.errors.isEmpty, let data = introspected.data else {
            throw CLIError("the dev server refused the introspection query")
        }
        let sdl = try GQLCodegen.Schema.sdl(
            introspection: try GQLValue.object(["data": data]).jsonString(), name: "schema.graphql")
        say("gql-cli codegen --url \(url) --documents GraphQL --output Generated")
        say("  introspects the dev server's schema (\(sdl.split(separator: "\n").count) lines of SDL) and generates")
        say("  Swift for GraphQL/\(Self.documentName):")
        say("  " + Self.document)
        let output = try GQLCodegen().generate(
            schema: try GQLCodegen.Schema(sdl: sdl, name: "schema.graphql"),
            documents: [GQLCodegen.Document(text: Self.document, name: Self.documentName)])
        let generated = output.files[Self.documentName + ".swift"] ?? ""
        say(
            "-> "
                + output.files.keys.sorted().map {
                    "\($0) (\(output.files[$0]?.split(separator: "\n").count ?? 0) lines)"
                }
                .joined(separator: ", "))
        say("outline of \(Self.documentName).swift:")
        for line in Self.outline(generated) { say("  " + line) }

        for (id, text) in [("demo-t1", "Milk"), ("demo-t2", "Train tickets")] {
            let input: GQLValue = ["objectId": .string(id), "text": .string(text)]
            _ = try await client.mutation(
                GQLValue.self, "mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }",
                ["input": input], at: "createObjects")
        }
        say("in an app: let data = try await server.fetch(RecentObjectsQuery(limit: 2))")
        let answer = try await client.query(
            GQLValue.self, Self.document, ["limit": 2], at: "listObjects")
        let items = (answer["items"]?.arrayValue ?? []).map {
            "\($0["objectId"]?.stringValue ?? "?") \"\($0["text"]?.stringValue ?? "")\""
        }
        say("  the same document against the dev server -> data.listObjects?.items: " + items.joined(separator: ", "))
        say("in a package: plugins: [.plugin(name: \"GQLCodegenPlugin\", package: \"GraphQLite\")] on the target")
        say("  regenerates these files at each swift build when a .graphql file, the schema or codegen.json changes")
    }

    /// The declarations of the generated file (types, initializers, properties), without bodies, comments or the
    /// `Variables` plumbing the initializer fills.
    static func outline(_ swift: String) -> [String] {
        let declarations = ["struct ", "enum ", "init(", "var ", "let ", "typealias "]
        var skipping: Int?
        return swift.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let indent = line.prefix { $0 == " " }.count
            if let depth = skipping, indent > depth || trimmed == "}" && indent == depth { return nil }
            skipping = nil
            guard !trimmed.hasPrefix("//"), declarations.contains(where: { trimmed.hasPrefix("public " + $0) }) else {
                return nil
            }
            if trimmed.hasPrefix("public struct Variables") {
                skipping = indent
                return nil
            }
            if trimmed.hasPrefix("public var variables") { return nil }
            let head = trimmed.split(separator: "{").first.map { $0.trimmingCharacters(in: .whitespaces) }
            return String(repeating: " ", count: indent) + (head ?? trimmed)
        }
    }
}
