extension GQLQuery {
    /// The kind of a GraphQL operation.
    public enum OperationType: String, Sendable, Hashable, CaseIterable {
        case query
        case mutation
        case subscription
    }

    /// One operation resolved for sending: its text with exactly the fragments it uses.
    ///
    /// ```swift
    /// let document = try GQLQuery.document(named: "CreateObject")
    /// let body = "{\"query\":\"\(document.escaped)\"}"
    /// ```
    public struct Document: Sendable, Hashable {
        /// The operation's name.
        public let name: String
        /// Whether the operation is a query, a mutation or a subscription.
        public let operationType: OperationType
        /// The operation's text followed by the fragments it uses, in order of first use, separated by a blank line.
        public let text: String
        /// The names of the fragments included in ``text``, in order of first use.
        public let fragments: [String]
        /// The file (or source name) the operation was loaded from.
        public let sourceName: String
        /// The 1-based line of the operation in ``sourceName``.
        public let line: Int

        /// ``text`` escaped for embedding in a JSON string: quotes, backslashes, newlines and other control
        /// characters. Kept for parity with the original API, which handed out this form.
        ///
        /// ```swift
        /// let body = "{\"query\":\"\(try GQLQuery.document(named: "Ping").escaped)\"}"
        /// ```
        public var escaped: String { GQLQuery.jsonEscaped(text) }
    }

    /// `text` escaped for the inside of a JSON string literal (RFC 8259 §7), without the surrounding quotes.
    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        JSONWriter.quote(text, into: &out)
        return String(out.dropFirst().dropLast())
    }
}
