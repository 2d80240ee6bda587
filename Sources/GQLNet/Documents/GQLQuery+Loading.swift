import Foundation

extension GQLQuery {
    /// The file extensions loaded from directories and bundles.
    public static let fileExtensions: Set<String> = ["graphql", "gql"]

    /// Loads every `.graphql` and `.gql` file under `directory`, recursively.
    ///
    /// ```swift
    /// try queries.load(directory: URL(fileURLWithPath: "GraphQL"))
    /// ```
    ///
    /// Files are read in path order, hidden files and folders are skipped. All or nothing: on error nothing from
    /// this call is kept.
    ///
    /// - Throws: ``GQLError`` `.io` when the directory or a file cannot be read; `.invalidArgument` for a syntax
    ///   error, an anonymous operation or a name already defined (naming both places).
    public func load(directory: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw GQLError(.io, "No directory at \(directory.path) to load GraphQL documents from.")
        }
        guard
            let enumerator = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])
        else {
            throw GQLError(.io, "Cannot list the directory \(directory.path).")
        }
        var files: [URL] = []
        for case let url as URL in enumerator where Self.fileExtensions.contains(url.pathExtension.lowercased()) {
            // Not `isRegularFile`: a symlink to a `.graphql` file is loaded too.
            if (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == false { files.append(url) }
        }
        files.sort { $0.path < $1.path }

        var definitions: [Definition] = []
        for file in files {
            let data: Data
            do {
                data = try Data(contentsOf: file)
            } catch {
                throw GQLError(.io, "Cannot read \(file.path): \(error.localizedDescription)")
            }
            guard let body = String(data: data, encoding: .utf8) else {
                throw GQLError(.invalidArgument, "\(file.path) is not UTF-8 text.")
            }
            definitions += try Self.definitions(in: body, sourceName: file.path)
        }
        try add(definitions)
    }

    /// Loads the `.graphql` and `.gql` resources of `bundle`, recursively under its resource directory.
    ///
    /// ```swift
    /// try GQLQuery.shared.load(bundle: .module)
    /// ```
    ///
    /// - Throws: ``GQLError`` `.io` when the bundle has no resource directory, or as ``load(directory:)``.
    public func load(bundle: Bundle) throws {
        guard let resources = bundle.resourceURL else {
            throw GQLError(.io, "The bundle at \(bundle.bundlePath) has no resource directory.")
        }
        try load(directory: resources)
    }

    /// Loads the operations and fragments in `text`; `sourceName` stands in for a file name in errors.
    ///
    /// ```swift
    /// try queries.load("query Ping { ping }", sourceName: "inline")
    /// ```
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for a syntax error, an anonymous operation or a name already
    ///   defined.
    public func load(_ text: String, sourceName: String) throws {
        try add(Self.definitions(in: text, sourceName: sourceName))
    }

    /// Loads every `.graphql` and `.gql` file under `directory` into ``shared``.
    ///
    /// ```swift
    /// try GQLQuery.load(directory: URL(fileURLWithPath: "GraphQL"))
    /// ```
    public static func load(directory: URL) throws { try shared.load(directory: directory) }

    /// Loads the `.graphql` and `.gql` resources of `bundle` into ``shared``.
    ///
    /// ```swift
    /// try GQLQuery.load(bundle: .main)
    /// ```
    public static func load(bundle: Bundle) throws { try shared.load(bundle: bundle) }

    /// Loads the operations and fragments in `text` into ``shared``.
    ///
    /// ```swift
    /// try GQLQuery.load("query Ping { ping }", sourceName: "inline")
    /// ```
    public static func load(_ text: String, sourceName: String) throws {
        try shared.load(text, sourceName: sourceName)
    }

    /// Adds `definitions` after checking their names against each other and the registry; all or nothing.
    private func add(_ definitions: [Definition]) throws {
        try state.withLock { state in
            var operations = state.operations
            var fragments = state.fragments
            for definition in definitions {
                let isOperation: Bool
                if case .operation = definition.kind { isOperation = true } else { isOperation = false }
                let kind = isOperation ? "Operation" : "Fragment"
                if let existing = isOperation ? operations[definition.name] : fragments[definition.name] {
                    throw GQLError(
                        .invalidArgument,
                        "\(kind) \"\(definition.name)\" is defined twice: at \(existing.place) and at "
                            + "\(definition.place).",
                        operation: isOperation ? definition.name : nil)
                }
                if isOperation {
                    operations[definition.name] = definition
                } else {
                    fragments[definition.name] = definition
                }
            }
            state.operations = operations
            state.fragments = fragments
            state.resolved = [:]
        }
    }
}
