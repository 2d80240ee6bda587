import BenchKit
import Foundation
import GQLCodegen
import GraphQL

/// The timed runs of one round, each a whole generation from the files on disk to the files written, and each run's
/// output checked before its time counts.
struct Generators {
    let corpus: CodegenCorpus
    let cli: URL
    let ariadne: URL
    let python: URL
    /// The files GQLCodegen wrote in its first run: every later run of it and of gql-cli must write the same bytes.
    private(set) var reference: [String: String] = [:]
    private var importChecked = false

    init(corpus: CodegenCorpus, cli: URL, venv: URL) {
        self.corpus = corpus
        self.cli = cli
        ariadne = venv.appendingPathComponent("bin/ariadne-codegen")
        python = venv.appendingPathComponent("bin/python")
    }

    /// Reads the schema and the documents, generates, writes: what `gql-cli codegen` does, without starting a
    /// process.
    mutating func inProcess() throws -> Double {
        let output = try corpus.folder("swift-in-process")
        let start = ContinuousClock.now
        let schemaText = try String(contentsOf: CodegenCorpus.schemaURL, encoding: .utf8)
        let documents = try corpus.documents.map { document in
            GQLCodegen.Document(
                text: try String(
                    contentsOf: corpus.documentsFolder.appendingPathComponent(document.name), encoding: .utf8),
                name: document.name)
        }
        let schema = try GQLCodegen.Schema(sdl: schemaText, name: "github-schema.graphql")
        let generated = try GQLCodegen().generate(schema: schema, documents: documents)
        _ = try generated.write(to: output)
        let seconds = (ContinuousClock.now - start).seconds
        if reference.isEmpty {
            guard generated.files.count == documents.count + 1 else {
                throw BenchError("GQLCodegen wrote \(generated.files.count) files for \(documents.count) documents")
            }
            reference = generated.files
        }
        try checkSwift(output, "GQLCodegen in-process")
        return seconds
    }

    /// `gql-cli codegen --schema … --documents … --output …`, a process of its own.
    func commandLine() throws -> Double {
        let output = try corpus.folder("swift-cli")
        let arguments = [
            "codegen", "--schema", CodegenCorpus.schemaURL.path, "--documents", corpus.documentsFolder.path,
            "--output", output.path,
        ]
        let (seconds, status, log) = try Self.timed(cli, arguments, in: output.deletingLastPathComponent())
        guard status == 0 else { throw BenchError("gql-cli codegen exited with \(status):\n\(log)") }
        try checkSwift(output, "gql-cli codegen")
        return seconds
    }

    /// `ariadne-codegen` in a fresh folder holding only its documented configuration for a local schema file and a
    /// folder of operations (pyproject.toml's `[tool.ariadne-codegen]` with `schema_path` and `queries_path`),
    /// everything else at its defaults: the `graphql_client` package written into that folder.
    mutating func ariadneCodegen() throws -> Double {
        let folder = try corpus.folder("ariadne")
        let configuration = """
            [tool.ariadne-codegen]
            schema_path = "\(CodegenCorpus.schemaURL.path)"
            queries_path = "\(corpus.documentsFolder.path)"

            """
        try Data(configuration.utf8).write(to: folder.appendingPathComponent("pyproject.toml"))
        let (seconds, status, log) = try Self.timed(ariadne, [], in: folder)
        guard status == 0 else { throw BenchError("ariadne-codegen exited with \(status):\n\(log)") }
        let package = folder.appendingPathComponent("graphql_client")
        let modules = try FileManager.default.contentsOfDirectory(atPath: package.path).filter { $0.hasSuffix(".py") }
        for name in ["__init__.py", "client.py", "fragments.py", "enums.py", "input_types.py"]
        where !modules.contains(name) {
            throw BenchError("ariadne-codegen wrote no graphql_client/\(name)")
        }
        // One module per operation, beside the client, its base, the enums, inputs, fragments and helpers.
        guard modules.count >= corpus.operationCount else {
            throw BenchError("ariadne-codegen wrote \(modules.count) modules for \(corpus.operationCount) operations")
        }
        if !importChecked {
            let (_, status, log) = try Self.timed(python, ["-c", "import graphql_client"], in: folder)
            guard status == 0 else { throw BenchError("ariadne-codegen's graphql_client does not import:\n\(log)") }
            importChecked = true
        }
        return seconds
    }

    /// The machine's floor for any generator here: reading the schema file and parsing it (GraphQLSwift's parser,
    /// the one GQLCodegen uses), nothing built from it.
    func readAndParseSchema() throws -> Double {
        let start = ContinuousClock.now
        let text = try String(contentsOf: CodegenCorpus.schemaURL, encoding: .utf8)
        let document = try GraphQL.parse(source: text, noLocation: true)
        let seconds = (ContinuousClock.now - start).seconds
        guard document.definitions.count > 1_000 else {
            throw BenchError("the schema parsed into \(document.definitions.count) definitions")
        }
        return seconds
    }

    /// The same floor on ariadne-codegen's side: the interpreter started, graphql-core imported, the schema read
    /// and parsed.
    func pythonReadAndParseSchema() throws -> Double {
        let script = "import sys, graphql; graphql.parse(open(sys.argv[1]).read(), no_location=True)"
        let (seconds, status, log) = try Self.timed(
            python, ["-c", script, CodegenCorpus.schemaURL.path], in: corpus.work)
        guard status == 0 else { throw BenchError("python could not parse the schema:\n\(log)") }
        return seconds
    }

    private func checkSwift(_ folder: URL, _ name: String) throws {
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        guard present == Set(reference.keys) else {
            let missing = Set(reference.keys).subtracting(present).sorted().prefix(5)
            throw BenchError(
                "\(name) wrote \(present.count) files, not the \(reference.count) expected (missing \(missing))")
        }
        for (file, text) in reference {
            let written = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            guard written == text else { throw BenchError("\(name) wrote other bytes in \(file)") }
        }
    }

    /// Runs a process to its end: its wall-clock seconds, exit status and the end of what it printed (kept in a file
    /// beside it, so that a generator's warnings do not fill the table's output).
    static func timed(_ executable: URL, _ arguments: [String], in folder: URL) throws -> (Double, Int32, String) {
        let logURL = folder.appendingPathComponent("process-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
            throw BenchError("cannot create \(logURL.path)")
        }
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        let start = ContinuousClock.now
        let (status, output) = try Peers.capture(executable, arguments, in: folder, errors: log)
        let seconds = (ContinuousClock.now - start).seconds
        let errors = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: logURL)
        return (seconds, status, String(output.suffix(3_000)) + "\n" + String(errors.suffix(1_000)))
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
