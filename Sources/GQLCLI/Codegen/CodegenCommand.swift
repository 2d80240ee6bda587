import ArgumentParser
import Foundation
import GQLCodegen
import GQLNet

/// `gql-cli codegen`: typed Swift operations from a folder of `.graphql` documents and a schema.
///
/// ```
/// gql-cli codegen --schema schema.graphql --documents GraphQL --output Sources/App/Generated
/// gql-cli codegen --schema schema.json --documents GraphQL --output Generated          # introspection JSON
/// gql-cli codegen --url https://example.com/graphql --api-key da2-… --documents GraphQL --output Generated
/// ```
struct CodegenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Generate typed Swift operations from .graphql documents and a schema.",
        discussion: """
            One Swift file per document, plus SchemaTypes.graphql.swift with the enums and input objects used. \
            Only files whose bytes change are rewritten; generated files of documents no longer there are \
            removed. Errors name file:line:column and exit with status 65, writing nothing.
            """
    )

    @Option(
        help: ArgumentHelp(
            "The schema: SDL (.graphql, .graphqls) or an introspection answer (.json). With --url, where the "
                + "introspected schema is written (default schema.graphql).", valueName: "path"))
    var schema: String?

    @Option(help: ArgumentHelp("The folder of .graphql documents, read recursively.", valueName: "folder"))
    var documents: String

    @Option(help: ArgumentHelp("The folder the Swift files are written to.", valueName: "folder"))
    var output: String

    @Option(
        help: ArgumentHelp(
            "A JSON config file: scalars (name to Swift type), access (public or internal), encodable, namespace.",
            valueName: "path"))
    var config: String?

    @Option(help: ArgumentHelp("Introspect this server's schema instead of reading one.", valueName: "url"))
    var url: String?

    @Option(
        name: .customLong("api-key"), help: ArgumentHelp("With --url: sent as x-api-key (AppSync).", valueName: "key"))
    var apiKey: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("With --url: a header to send (repeatable).", valueName: "name:value"))
    var headers: [String] = []

    func validate() throws {
        guard schema != nil || url != nil else { throw ValidationError("give the schema: --schema or --url") }
        if url == nil && (apiKey != nil || !headers.isEmpty) {
            throw ValidationError("--api-key and --header go with --url")
        }
    }

    func run() async throws {
        let configuration = try loadConfiguration()
        let schema = try await loadSchema()
        let documents = try loadDocuments()
        let generated: GQLCodegen.Output
        do {
            generated = try GQLCodegen(configuration: configuration).generate(schema: schema, documents: documents)
        } catch let failure as GQLCodegen.Failure {
            Self.report(schema.warnings)
            Self.report(failure.diagnostics)
            Self.standardError("codegen: \(failure.diagnostics.count) error(s); nothing was written\n")
            throw ExitCode(65)
        }
        Self.report(generated.warnings)
        let report = try CLIError.guarding("cannot write the generated files") {
            try generated.write(to: URL(fileURLWithPath: output, isDirectory: true))
        }
        print(
            "\(report.written.count) written, \(report.unchanged.count) unchanged, \(report.removed.count) removed in \(output)"
        )
    }

    private func loadConfiguration() throws -> GQLCodegen.Configuration {
        guard let config else { return .init() }
        let text = try CLIError.guarding("cannot read \(config)") {
            try String(contentsOfFile: config, encoding: .utf8)
        }
        return try CLIError.guarding("cannot use \(config)") { try GQLCodegen.Configuration(json: text, name: config) }
    }

    private func loadSchema() async throws -> GQLCodegen.Schema {
        if let url {
            let sdl = try await introspect(url)
            let path = schema ?? "schema.graphql"
            try CLIError.guarding("cannot write \(path)") {
                try Data(sdl.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
            return try parse { try GQLCodegen.Schema(sdl: sdl, name: path) }
        }
        let path = schema ?? ""
        let text = try CLIError.guarding("cannot read \(path)") { try String(contentsOfFile: path, encoding: .utf8) }
        if path.hasSuffix(".json") { return try parse { try GQLCodegen.Schema(introspection: text, name: path) } }
        return try parse { try GQLCodegen.Schema(sdl: text, name: path) }
    }

    /// A schema that cannot be read is a data error (65), with its diagnostics.
    private func parse(_ body: () throws -> GQLCodegen.Schema) throws -> GQLCodegen.Schema {
        do {
            return try body()
        } catch let failure as GQLCodegen.Failure {
            Self.report(failure.diagnostics)
            throw ExitCode(65)
        }
    }

    private func introspect(_ url: String) async throws -> String {
        var fields: [String: String] = [:]
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("--header takes name:value") }
            fields[String(header[..<colon]).trimmingCharacters(in: .whitespaces)] =
                String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        if let apiKey { fields["x-api-key"] = apiKey }
        let server = GQLServer(HTTP: url, headers: fields)
        let result: GQLResult
        do {
            result = try await server.query(GQLCodegen.Schema.introspectionQuery)
        } catch {
            try? await server.shutdown()
            throw CLIError("cannot introspect the server", error)
        }
        try? await server.shutdown()
        guard result.errors.isEmpty, let data = result.data else {
            throw CLIError(
                "the server refused the introspection query: \(result.errors.map(\.message).joined(separator: "; "))")
        }
        let json = try CLIError.guarding("cannot read the introspection answer") {
            try GQLValue.object(["data": data]).jsonString()
        }
        return try CLIError.guarding("cannot read the introspection answer") {
            try GQLCodegen.Schema.sdl(introspection: json, name: url)
        }
    }

    /// Every `.graphql` and `.gql` file under --documents (the schema file excepted), named by its path there.
    private func loadDocuments() throws -> [GQLCodegen.Document] {
        let root = URL(fileURLWithPath: documents, isDirectory: true).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CLIError("no folder at \(documents)")
        }
        let schemaPath = schema.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        let names = (FileManager.default.subpaths(atPath: root.path) ?? []).sorted()
        return try names.compactMap { name in
            guard name.hasSuffix(".graphql") || name.hasSuffix(".gql") else { return nil }
            let file = root.appendingPathComponent(name)
            guard file.standardizedFileURL.path != schemaPath else { return nil }
            let text = try CLIError.guarding("cannot read \(file.path)") {
                try String(contentsOf: file, encoding: .utf8)
            }
            return GQLCodegen.Document(text: text, name: name)
        }
    }

    private static func report(_ diagnostics: [GQLCodegen.Diagnostic]) {
        for diagnostic in diagnostics { standardError(diagnostic.description + "\n") }
    }

    private static func standardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
