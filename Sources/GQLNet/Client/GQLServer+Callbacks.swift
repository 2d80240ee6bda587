import GQLCore

/// Completion-handler forms of ``GQLServer``'s operations: thin adapters over the async methods.
///
/// The handler runs once, on an arbitrary thread, with either a result or an error. The returned task can be
/// cancelled; the handler then receives a `GQLError` with code `.cancelled`.
extension GQLServer {
    /// Runs a query and calls `completion` with its result or an error.
    ///
    /// ```swift
    /// server.query("{ listObjects { items { objectId } } }") { result, error in
    ///     if let result { print(result.data ?? .null) } else { print(error!) }
    /// }
    /// ```
    @discardableResult
    public func query(
        _ query: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:],
        completion: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        Task {
            do {
                completion(try await self.query(query, variables, headers: headers), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Runs a mutation and calls `completion` with its result or an error.
    ///
    /// ```swift
    /// server.mutation(create, ["input": ["objectId": "1", "text": "hi"]]) { result, error in
    ///     print(result?.errors ?? [], error as Any)
    /// }
    /// ```
    @discardableResult
    public func mutation(
        _ mutation: String, _ variables: [String: any GQLValueConvertible] = [:], headers: [String: String] = [:],
        completion: @escaping @Sendable (GQLResult?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        Task {
            do {
                completion(try await self.mutation(mutation, variables, headers: headers), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// Sends a batch and calls `completion` with the results in order or an error.
    ///
    /// ```swift
    /// server.batch([(query: "{ listObjects { items { objectId } } }", variables: [:])]) { results, error in }
    /// ```
    @discardableResult
    public func batch(
        _ operations: [(query: String, variables: [String: any GQLValueConvertible])],
        headers: [String: String] = [:],
        completion: @escaping @Sendable ([GQLResult]?, (any Error)?) -> Void
    ) -> Task<Void, Never> {
        let operations = operations.map { Operation(query: $0.query, variables: $0.variables) }
        return Task {
            do {
                completion(try await self.batch(operations.map { ($0.query, $0.variables) }, headers: headers), nil)
            } catch {
                completion(nil, error)
            }
        }
    }

    /// One operation of a batch as a `Sendable` value, to cross into the adapter's task.
    private struct Operation: Sendable {
        var query: String
        var variables: [String: any GQLValueConvertible]
    }
}
