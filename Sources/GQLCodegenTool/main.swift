// gql-codegen: the generator as the build plugin runs it (GQLCodegen alone, no network, no argument parser).
//
//   gql-codegen --schema PATH [--config PATH] --output DIR --root DIR DOCUMENT...
//
// Writes one Swift file per document (named by its path under --root) and SchemaTypes.graphql.swift, every one of
// them even when it holds nothing (the plugin declares them all in advance). Diagnostics go to standard error as
// path:line:column: error: message, which SwiftPM and editors show at the place; exit 1 on errors.
import Foundation
import GQLCodegen

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("gql-codegen: \(message)\n".utf8))
    exit(1)
}

var options: [String: String] = [:]
var documentPaths: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument.hasPrefix("--") {
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
        options[String(argument.dropFirst(2))] = value
    } else {
        documentPaths.append(argument)
    }
}
guard let schemaPath = options["schema"], let output = options["output"], let root = options["root"] else {
    fail("usage: gql-codegen --schema PATH [--config PATH] --output DIR --root DIR DOCUMENT...")
}

do {
    var configuration = GQLCodegen.Configuration()
    if let config = options["config"] {
        configuration = try GQLCodegen.Configuration(
            json: String(contentsOfFile: config, encoding: .utf8), name: config)
    }
    let schemaText = try String(contentsOfFile: schemaPath, encoding: .utf8)
    let schema =
        schemaPath.hasSuffix(".json")
        ? try GQLCodegen.Schema(introspection: schemaText, name: schemaPath)
        : try GQLCodegen.Schema(sdl: schemaText, name: schemaPath)
    let rootURL = URL(fileURLWithPath: root).standardizedFileURL
    let documents = try documentPaths.map { path -> GQLCodegen.Document in
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let name =
            url.path.hasPrefix(rootURL.path + "/")
            ? String(url.path.dropFirst(rootURL.path.count + 1)) : url.lastPathComponent
        return GQLCodegen.Document(text: try String(contentsOf: url, encoding: .utf8), name: name)
    }
    let codegen = GQLCodegen(configuration: configuration)
    var generated = try codegen.generate(schema: schema, documents: documents)
    for warning in generated.warnings where !warning.message.hasSuffix("the first definition is kept") {
        FileHandle.standardError.write(Data("\(warning)\n".utf8))
    }
    for name in codegen.fileNames(forDocuments: documents.map(\.name)) where generated.files[name] == nil {
        generated.files[name] = GQLCodegen.Output.header(source: name) + "// (nothing to generate)\n"
    }
    try generated.write(to: URL(fileURLWithPath: output, isDirectory: true))
} catch let failure as GQLCodegen.Failure {
    // Paths relative to --root name the document: give the whole path back, so the diagnostic points at the file.
    for diagnostic in failure.diagnostics {
        var located = diagnostic
        if !located.file.hasPrefix("/") { located.file = root + "/" + located.file }
        FileHandle.standardError.write(Data("\(located)\n".utf8))
    }
    exit(1)
} catch {
    fail("\(error)")
}
