import Foundation
import PackagePlugin

/// Runs the GraphQL code generator on a target's `.graphql` files at every build, so the typed operations follow
/// the documents: `schema.graphql` (or `schema.graphqls`, or `schema.json` for an introspection answer) in the
/// target is the schema, `codegen.json` its optional config, every other `.graphql` / `.gql` file a document.
///
/// ```swift
/// .target(name: "App", dependencies: ["GQLNet"], plugins: [.plugin(name: "GQLCodegenPlugin", package: "GraphQLite")])
/// ```
@main
struct GQLCodegenPlugin: BuildToolPlugin {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let schemaNames: Set<String> = ["schema.graphql", "schema.graphqls", "schema.json"]

    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let files = target.sourceFiles.map(\.url).sorted { $0.path < $1.path }
        let documents = files.filter {
            ["graphql", "gql"].contains($0.pathExtension) && !Self.schemaNames.contains($0.lastPathComponent)
        }
        guard !documents.isEmpty else { return [] }
        guard let schema = files.first(where: { Self.schemaNames.contains($0.lastPathComponent) }) else {
            throw Failure(
                description: "\(target.name) has .graphql documents but no schema.graphql (or schema.json) beside them")
        }
        let config = files.first { $0.lastPathComponent == "codegen.json" }
        let root = target.directoryURL.standardizedFileURL.path
        let names = documents.map { url -> String in
            let path = url.standardizedFileURL.path
            return path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : url.lastPathComponent
        }
        // The generator's file names (GQLCodegen.fileNames(forDocuments:)), which the build must know in advance.
        var prefix: [String] = []
        if let config, let data = try? Data(contentsOf: config),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let namespace = object["namespace"] as? String
        {
            prefix = [namespace]
        }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedSources")
        let outputs = (names + ["SchemaTypes.graphql"]).map { name -> URL in
            let flat = (prefix + name.split(separator: "/").map(String.init)).joined(separator: ".")
            let file = (flat.hasSuffix(".graphql") || flat.hasSuffix(".gql") ? flat : flat + ".graphql") + ".swift"
            return output.appendingPathComponent(file)
        }
        var arguments = ["--schema", schema.path, "--output", output.path, "--root", root]
        if let config { arguments += ["--config", config.path] }
        arguments += documents.map(\.path)
        return [
            .buildCommand(
                displayName: "Generating Swift for \(target.name)'s GraphQL documents",
                executable: try context.tool(named: "GQLCodegenTool").url,
                arguments: arguments,
                inputFiles: [schema] + (config.map { [$0] } ?? []) + documents,
                outputFiles: outputs)
        ]
    }
}
