extension GQLServer {
    /// Receives the header fields of each HTTP answer that a call made in its scope gets (after any retry, before
    /// the answer's status and body are checked): a package hook, not public API, through which GQLCache reads
    /// `Cache-Control` without GQLResult carrying the HTTP layer. Answers over the WebSocket have no header
    /// fields and call nothing.
    ///
    /// ```swift
    /// let result = try await GQLServer.$answerHeaders.withValue({ fields in seen.withLock { $0 = fields } }) {
    ///     try await server.query(text, variables)
    /// }
    /// ```
    @TaskLocal package static var answerHeaders: (@Sendable ([(name: String, value: String)]) -> Void)?
}
