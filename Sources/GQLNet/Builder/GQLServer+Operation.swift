extension GQLServer {
    /// Runs a built query or mutation over HTTP and returns its data and errors.
    ///
    /// ```swift
    /// let op = GQLOperation.query("GetObject", variables: [.init("id", "ID!")]) {
    ///     GQLOperation.Field("getObjects", arguments: ["objectId": .variable("id")]) { "text" }
    /// }
    /// let result = try await server.execute(op, ["id": "1"])
    /// ```
    ///
    /// The operation is sent as its compact text with the fragments it uses
    /// (``GQLOperation/render(_:includingFragments:)``).
    /// - Parameters:
    ///   - variables: plain Swift values (`String`, `Int`, `Bool`, arrays, dictionaries, `GQLValue` …).
    ///   - headers: added to this request only.
    /// - Throws: ``GQLError`` `.invalidArgument` for a subscription (not sent over HTTP) or an operation that cannot
    ///   be rendered; the transport errors of the string-based `query` and `mutation` methods otherwise. GraphQL
    ///   errors are returned in ``GQLResult/errors``.
    public func execute(
        _ operation: GQLOperation, _ variables: [String: any GQLValueConvertible] = [:],
        headers: [String: String] = [:]
    ) async throws -> GQLResult {
        let text = try Self.text(of: operation)
        return operation.kind == .mutation
            ? try await mutation(text, variables, headers: headers)
            : try await query(text, variables, headers: headers)
    }

    /// Starts a built subscription over the server's WebSocket; see ``subscription(_:_:)``.
    ///
    /// ```swift
    /// let op = GQLOperation.subscription { GQLOperation.Field("onCreateObjects") { "objectId" } }
    /// for try await event in try server.subscription(op) { print(event.data ?? .null) }
    /// ```
    /// - Throws: ``GQLError`` `.invalidArgument` when `operation` is not a subscription or cannot be rendered.
    public func subscription(
        _ operation: GQLOperation, _ variables: [String: any GQLValueConvertible] = [:]
    ) throws -> Subscription {
        guard operation.kind == .subscription else {
            throw GQLError(
                .invalidArgument, "GQLServer.subscription(_:) was given a \(operation.kind); use execute(_:)",
                operation: operation.name)
        }
        return subscription(try operation.render(), variables)
    }

    /// The compact text of `operation` with its fragments, for a query or a mutation.
    static func text(of operation: GQLOperation) throws -> String {
        guard operation.kind != .subscription else {
            throw GQLError(
                .invalidArgument,
                "GQLServer.execute(_:) was given a subscription; subscriptions are not sent over HTTP",
                operation: operation.name)
        }
        return try operation.render()
    }
}
