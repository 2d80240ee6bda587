import Foundation
import GQLCore

/// Generates typed Swift operations from `.graphql` documents and a schema.
///
/// ```swift
/// let schema = try GQLCodegen.Schema(sdl: sdlText, name: "schema.graphql")
/// let documents = [GQLCodegen.Document(text: queryText, name: "Users.graphql")]
/// let output = try GQLCodegen().generate(schema: schema, documents: documents)
/// try output.write(to: URL(fileURLWithPath: "Sources/App/Generated"))
/// ```
///
/// Generation reads everything first and writes nothing until the whole run has passed: an error in any document
/// throws ``Failure`` naming every problem by `file:line:column`.
public struct GQLCodegen: Sendable {
    /// The generator's version, named in the header of every file it writes.
    public static let version = "1.0.0"

    /// What to generate and how.
    public var configuration: Configuration

    /// A generator with `configuration`.
    ///
    /// ```swift
    /// var configuration = GQLCodegen.Configuration()
    /// configuration.scalars["DateTime"] = "Date"
    /// let codegen = GQLCodegen(configuration: configuration)
    /// ```
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// One `.graphql` file's text, with the name its diagnostics use (usually its path relative to the documents
    /// folder).
    public struct Document: Sendable, Hashable {
        public var text: String
        public var name: String

        /// ```swift
        /// let document = GQLCodegen.Document(text: "query Ping { ping }", name: "Ping.graphql")
        /// ```
        public init(text: String, name: String) {
            self.text = text
            self.name = name
        }
    }

    /// Generates the Swift files for `documents` against `schema`.
    ///
    /// One file per document (`Users.graphql` → `Users.graphql.swift`), plus `SchemaTypes.graphql.swift` with the
    /// enums and input objects the operations use.
    /// ```swift
    /// let output = try GQLCodegen().generate(schema: schema, documents: documents)
    /// print(output.files.keys.sorted())
    /// ```
    /// - Throws: ``Failure`` listing every syntax or validation error, each by `file:line:column`.
    public func generate(schema: Schema, documents: [Document]) throws -> Output {
        let set = try DocumentSet(documents: documents, schema: schema, configuration: configuration)
        var emitter = SwiftEmitter(set: set, schema: schema, configuration: configuration)
        return Output(files: try emitter.files(), warnings: schema.warnings + set.warnings)
    }

    /// The names of the files a run over documents of these names writes, in the same order, then
    /// `SchemaTypes.graphql.swift`: `Users/GetUser.graphql` → `Users.GetUser.graphql.swift`, and with a
    /// ``Configuration/namespace`` `GitHub.Users.GetUser.graphql.swift` (a SwiftPM target cannot hold two files of
    /// one name, so the files of two schemas must differ). The build plugin declares them before it runs.
    ///
    /// ```swift
    /// codegen.fileNames(forDocuments: ["Users.graphql"])   // ["Users.graphql.swift", "SchemaTypes.graphql.swift"]
    /// ```
    public func fileNames(forDocuments names: [String]) -> [String] {
        (names + [SwiftEmitter.schemaTypesFile]).map { Self.fileName(for: $0, namespace: configuration.namespace) }
    }

    static func fileName(for document: String, namespace: String?) -> String {
        let flat = ((namespace.map { [$0] } ?? []) + document.split(separator: "/").map(String.init))
            .joined(separator: ".")
        return (flat.hasSuffix(".graphql") || flat.hasSuffix(".gql") ? flat : flat + ".graphql") + ".swift"
    }
}

extension GQLCodegen {
    /// A problem found in a schema or document, by file, line and column.
    public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
        /// Whether the run stops for it.
        public enum Severity: String, Sendable, Hashable { case error, warning }

        public var severity: Severity
        public var file: String
        public var line: Int
        public var column: Int
        public var message: String

        public init(_ severity: Severity, file: String, line: Int, column: Int, _ message: String) {
            self.severity = severity
            self.file = file
            self.line = line
            self.column = column
            self.message = message
        }

        /// `file:line:column: error: message`, the form compilers and editors read.
        public var description: String { "\(file):\(line):\(column): \(severity.rawValue): \(message)" }
    }

    /// Thrown when a schema or a document cannot be generated: every error found, in file order.
    ///
    /// ```swift
    /// do { _ = try codegen.generate(schema: schema, documents: documents) }
    /// catch let failure as GQLCodegen.Failure { failure.diagnostics.forEach { print($0) } }
    /// ```
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var diagnostics: [Diagnostic]

        public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }

        public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }
}
