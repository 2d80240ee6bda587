import GQLCore

extension GQLServer {
    /// Runs a generated query and returns its decoded data.
    ///
    /// ```swift
    /// let data = try await server.fetch(GetUserQuery(id: "1"))
    /// print(data.user?.name ?? "none")
    /// ```
    /// - Throws: ``GQLResult/Failure`` (the GraphQL errors, with the partial data) when the answer has errors;
    ///   ``GQLError`` `.decoding` when the data does not fit the generated type, and the transport errors of
    ///   ``query(_:_:headers:)``.
    public func fetch<Query: GQLTypedQuery>(_ query: Query, headers: [String: String] = [:]) async throws -> Query.Data
    {
        try Self.decodeData(
            Query.Data.self, from: await self.query(Query.document, variables(of: query), headers: headers))
    }

    /// Runs a generated mutation and returns its decoded data.
    ///
    /// ```swift
    /// let created = try await server.perform(CreatePostMutation(input: .init(title: "Hi")))
    /// ```
    /// - Throws: as ``fetch(_:headers:)``.
    public func perform<Mutation: GQLTypedMutation>(_ mutation: Mutation, headers: [String: String] = [:])
        async throws -> Mutation.Data
    {
        try Self.decodeData(
            Mutation.Data.self, from: await self.mutation(Mutation.document, variables(of: mutation), headers: headers))
    }

    /// A generated subscription's events, decoded, as they arrive over the server's WebSocket (see
    /// ``subscription(_:_:)`` for connection and iteration).
    ///
    /// ```swift
    /// for try await event in server.subscribe(OnPostSubscription()) { print(event.onPost?.title ?? "") }
    /// ```
    /// - Throws (from iteration): ``GQLResult/Failure`` for an event with errors; ``GQLError`` `.decoding` for one
    ///   that does not fit the generated type; the errors of ``subscription(_:_:)``.
    public func subscribe<Subscription: GQLTypedSubscription>(_ subscription: Subscription) -> TypedSubscription<
        Subscription
    > {
        TypedSubscription(events: self.subscription(Subscription.document, variables(of: subscription)))
    }

    /// A generated subscription's decoded events. See ``GQLServer/subscribe(_:)``.
    public struct TypedSubscription<Operation: GQLTypedSubscription>: AsyncSequence, Sendable {
        public typealias Element = Operation.Data
        public typealias Failure = any Error
        let events: GQLServer.Subscription

        public func makeAsyncIterator() -> Iterator { Iterator(events: events.makeAsyncIterator()) }

        public struct Iterator: AsyncIteratorProtocol {
            var events: GQLServer.Subscription.Iterator

            public mutating func next() async throws -> Operation.Data? {
                guard let result = try await events.next() else { return nil }
                return try GQLServer.decodeData(Operation.Data.self, from: result)
            }
        }
    }

    /// The generated variables as the request's dictionary.
    private func variables(of operation: some GQLTypedOperation) -> [String: any GQLValueConvertible] {
        operation.variables.gqlValue.objectValue?.dictionary ?? [:]
    }

    /// The whole `data` of a result decoded, or its errors thrown.
    package static func decodeData<T: Decodable>(_ type: T.Type, from result: GQLResult) throws -> T {
        guard result.errors.isEmpty else { throw GQLResult.Failure(errors: result.errors, data: result.data) }
        return try (result.data ?? .null).decode(type)
    }
}
