import Foundation

/// A thread-safe registry of named GraphQL operations and fragments, loaded from `.graphql` / `.gql` files.
///
/// Look an operation up by name and get its text together with exactly the fragments it uses, transitively:
///
/// ```swift
/// try GQLQuery.load(directory: URL(fileURLWithPath: "GraphQL"))
/// let text = try GQLQuery["CreateObject"]          // operation + the fragments it spreads
/// let result = try await server.mutation(text, variables)
/// ```
///
/// The static members forward to ``shared``, the process-wide registry. Tests and tools that want their own set
/// of documents create an instance:
///
/// ```swift
/// let queries = GQLQuery()
/// try queries.load("query Ping { ping }", sourceName: "inline")
/// let text = try queries["Ping"]
/// ```
///
/// Documents are parsed with GraphQLSwift's parser. Every load is all or nothing: a syntax error, an anonymous
/// operation or a name already taken leaves the registry as it was.
public final class GQLQuery: Sendable {
    /// The process-wide registry the static members use.
    public static let shared = GQLQuery()

    struct State {
        var operations: [String: Definition] = [:]
        var fragments: [String: Definition] = [:]
        var resolved: [String: Document] = [:]
    }

    let state = GQLLocked(State())

    /// Creates an empty registry.
    ///
    /// ```swift
    /// let queries = GQLQuery()
    /// ```
    public init() {}

    // MARK: Lookup

    /// The text of the operation `name` with exactly the fragments it uses, ready to send.
    ///
    /// ```swift
    /// let text = try queries["CreateObject"]
    /// ```
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` when the operation is unknown or uses an unknown fragment.
    public subscript(_ name: String) -> String {
        get throws { try document(named: name).text }
    }

    /// The resolved operation `name`: its text, escaped text, type and the fragments included.
    ///
    /// ```swift
    /// let document = try queries.document(named: "CreateObject")
    /// print(document.operationType, document.fragments)
    /// ```
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` when the operation is unknown or uses an unknown fragment.
    public func document(named name: String) throws -> Document {
        try state.withLock { state in
            if let cached = state.resolved[name] { return cached }
            let document = try Self.resolve(name, in: state)
            state.resolved[name] = document
            return document
        }
    }

    /// Whether an operation called `name` is loaded.
    ///
    /// ```swift
    /// if queries.contains("CreateObject") { ... }
    /// ```
    public func contains(_ name: String) -> Bool {
        state.withLock { $0.operations[name] != nil }
    }

    /// The names of the loaded operations, sorted.
    ///
    /// ```swift
    /// for name in queries.operationNames { print(name) }
    /// ```
    public var operationNames: [String] {
        state.withLock { $0.operations.keys.sorted() }
    }

    /// The names of the loaded fragments, sorted.
    ///
    /// ```swift
    /// print(queries.fragmentNames)
    /// ```
    public var fragmentNames: [String] {
        state.withLock { $0.fragments.keys.sorted() }
    }

    /// Resolves every loaded operation, so a missing fragment shows up now rather than at the first request.
    ///
    /// ```swift
    /// try queries.validate()
    /// ```
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for the first operation (by name) that uses an unknown fragment.
    public func validate() throws {
        for name in operationNames { _ = try document(named: name) }
    }

    /// Forgets every loaded operation and fragment.
    ///
    /// ```swift
    /// queries.removeAll()
    /// ```
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    // MARK: Static forms on the shared registry

    /// The text of the operation `name` in ``shared``, with exactly the fragments it uses.
    ///
    /// ```swift
    /// let text = try GQLQuery["CreateObject"]
    /// ```
    public static subscript(_ name: String) -> String {
        get throws { try shared[name] }
    }

    /// The resolved operation `name` in ``shared``.
    ///
    /// ```swift
    /// let escaped = try GQLQuery.document(named: "CreateObject").escaped
    /// ```
    public static func document(named name: String) throws -> Document {
        try shared.document(named: name)
    }

    /// The names of the operations loaded into ``shared``, sorted.
    ///
    /// ```swift
    /// print(GQLQuery.operationNames)
    /// ```
    public static var operationNames: [String] { shared.operationNames }

    /// Forgets everything loaded into ``shared``.
    ///
    /// ```swift
    /// GQLQuery.removeAll()
    /// ```
    public static func removeAll() { shared.removeAll() }
}
