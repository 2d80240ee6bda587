import BenchKit
import Foundation
import GQLCodegen

/// What CodegenBench generates from: GitHub's public schema (read from shared/corpus beside the repository, never
/// copied into it) and 200 operations, staged once in a temporary folder that all three generators read.
///
/// - `documents/Fixtures/`: the 72 operations and the fragments of Tests/GQLCodegenTests/Fixtures/GitHub.
/// - `documents/Benchmarks/`: Benchmarks/Codegen/Operations, the 10 of Compared.graphql (written by hand) and the
///   118 that make-operations.py wrote from its seed.
struct CodegenCorpus {
    static let schemaURL = Peers.root.deletingLastPathComponent().appendingPathComponent(
        "shared/corpus/github-schema.graphql")
    static let sources = [
        ("Fixtures", Peers.root.appendingPathComponent("Tests/GQLCodegenTests/Fixtures/GitHub")),
        ("Benchmarks", Peers.root.appendingPathComponent("Benchmarks/Codegen/Operations")),
    ]
    /// The file of the operations also written by hand, and that Swift.
    static let comparedDocument = "Benchmarks/Compared.graphql"
    static let handWritten = Peers.root.appendingPathComponent("Benchmarks/Codegen/HandWritten/Compared.swift")

    /// The staging folder (removed by ``remove()``).
    let work: URL
    let documentsFolder: URL
    let schemaText: String
    /// Every document, named by its path under `documentsFolder` (`Fixtures/Issues.graphql`).
    let documents: [(name: String, text: String)]
    let operationCount: Int

    /// Nil when the schema is not there (a copy of the repository without shared/ beside it).
    init?() throws {
        guard FileManager.default.fileExists(atPath: Self.schemaURL.path) else { return nil }
        schemaText = try String(contentsOf: Self.schemaURL, encoding: .utf8)
        work = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-bench-\(UUID().uuidString)")
        documentsFolder = work.appendingPathComponent("documents")
        var documents: [(String, String)] = []
        for (prefix, folder) in Self.sources {
            let target = documentsFolder.appendingPathComponent(prefix)
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            where name.hasSuffix(".graphql") && name != "schema.graphql" {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                try Data(text.utf8).write(to: target.appendingPathComponent(name))
                documents.append(("\(prefix)/\(name)", text))
            }
        }
        self.documents = documents
        operationCount = documents.map { Self.operations(in: $0.1) }.reduce(0, +)
    }

    /// Operations defined in `text`: lines that open one (every operation here starts a line with its keyword).
    static func operations(in text: String) -> Int {
        text.split(separator: "\n").filter { line in
            ["query ", "mutation ", "subscription "].contains { line.hasPrefix($0) }
        }.count
    }

    /// GQLCodegen's files (at its defaults) for every document, or for the one named `only` alone.
    func generate(only: String? = nil) throws -> [String: String] {
        let schema = try GQLCodegen.Schema(sdl: schemaText, name: "github-schema.graphql")
        let documents = self.documents.filter { only == nil || $0.name == only }.map {
            GQLCodegen.Document(text: $0.text, name: only == nil ? $0.name : ($0.name as NSString).lastPathComponent)
        }
        guard !documents.isEmpty else { throw BenchError("no document \(only ?? "")") }
        return try GQLCodegen().generate(schema: schema, documents: documents).files
    }

    /// A fresh empty folder under the staging folder.
    func folder(_ name: String) throws -> URL {
        let url = work.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func remove() { try? FileManager.default.removeItem(at: work) }
}
