import GraphQL

/// An operation as the emitter needs it: its name, kind, variables, selections and the text to send.
struct OperationIR: Sendable {
    var name: String
    var kind: OperationType
    var file: String
    var variables: [VariableIR]
    var selections: Selections
    /// The operation's text followed by every fragment it uses, transitively, in order of first use.
    var text: String
}

/// A variable of an operation, in document order.
struct VariableIR: Sendable {
    var name: String
    var type: TypeReference
}

/// A named fragment: its own Swift type.
struct FragmentIR: Sendable {
    var name: String
    var typeCondition: String
    var file: String
    var selections: Selections
    /// The fragment's definition as sent, and the fragments it spreads, transitively.
    var text: String
    var uses: [String]
}

/// What a selection set selects on `parent`, in document order, before merging.
struct Selections: Sendable {
    var parent: String
    var items: [Item] = []

    enum Item: Sendable {
        case field(FieldIR)
        case inline(typeCondition: String, conditional: Bool, Selections)
        /// `conditional`: under `@include` or `@skip`, so the answer may leave the fragment's fields out.
        case spread(fragment: String, typeCondition: String, conditional: Bool)
    }
}

/// One selected field: its response key (alias or name), its schema type and what is selected below it.
struct FieldIR: Sendable {
    var key: String
    var name: String
    var type: TypeReference
    /// Under `@include` or `@skip`: the answer may leave it out.
    var conditional: Bool
    var selections: Selections?
    /// The type the field is selected on, its arguments as printed (sorted by name) and where it is written: what
    /// GraphQL's "fields can merge" rule compares (DocumentSet+Merging).
    var parent = ""
    var arguments = ""
    var place: Place?
}

/// A place in a document, for a diagnostic.
struct Place: Sendable, Hashable {
    var file: String
    var line: Int
    var column: Int

    init(_ loc: Location?) {
        file = loc?.source.name ?? ""
        line = loc?.startToken.line ?? 1
        column = loc?.startToken.column ?? 1
    }

    var description: String { "\(file):\(line):\(column)" }
}
