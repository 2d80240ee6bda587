import ArgumentParser
import Foundation
import GQLCache
import GQLNet

/// Runs one query or mutation for `gql-cli query` and `gql-cli mutate` and prints its response object.
///
/// Exit status: as ``ClientHelp/exitStatus(subscribing:)`` says, through ``ClientFailure``.
enum OperationRunner {
    /// How long a WebSocket-only operation may take when --timeout is not given.
    static let defaultTimeout = 30.0

    static func run(_ kind: GQLQuery.OperationType, client: ClientOptions, operation: OperationOptions) async throws {
        let text = try ClientFailure.badOptions { try operation.operationText(for: kind) }
        let variables = try operation.parsedVariables().mapValues { $0 as any GQLValueConvertible }
        let secrets = client.secrets
        let server = try client.makeServer(subscribing: false)
        let socketOnly = client.isSocketOnly
        let result: GQLResult
        do {
            result = try await within(client.timeout ?? defaultTimeout, kind: kind, server: server) {
                if socketOnly { try await server.connect() }
                return kind == .mutation
                    ? try await server.mutation(text, variables) : try await server.query(text, variables)
            }
        } catch {
            try? await server.shutdown()
            throw ClientFailure.error(error, "the \(kind.rawValue) failed", secrets: secrets)
        }
        try? await server.shutdown()
        print(try operation.printed(result))
        if !result.errors.isEmpty {
            throw ClientFailure.graphQLErrors(result.errors, in: kind.rawValue, secrets: secrets)
        }
    }

    /// Runs a query through the cache of `--cache` by `--policy`, printing each response (two for
    /// cache-and-network when the cache has the answer: the cached one at once, then the network's). When the
    /// network fails after cache-and-network printed the cached response, that response stands (as
    /// `GQLCache.fetch` returns it offline): the failure is a note on standard error and the exit status is 0.
    static func runCached(client: ClientOptions, operation: OperationOptions, cache options: CacheOptions)
        async throws
    {
        let text = try ClientFailure.badOptions { try operation.operationText(for: .query) }
        let variables = try operation.parsedVariables().mapValues { $0 as any GQLValueConvertible }
        let secrets = client.secrets
        let server = try client.makeServer(subscribing: false)
        let socketOnly = client.isSocketOnly
        let policy = options.policy?.policy ?? .cacheFirst
        let fetched: GQLCache.Result
        var printedCached = false
        var opened: GQLCache?
        do {
            guard let cache = try options.open() else { return }
            opened = cache
            // As GQLCache.fetch: an answer that must be revalidated (`no-cache`) is not served before the network's.
            if policy == .cacheAndNetwork, let cached = try? cache.cachedResultIfComplete(text, variables) {
                print(try operation.printed(json: options.response(cached)))
                printedCached = true
            }
            fetched = try await within(client.timeout ?? defaultTimeout, kind: .query, server: server) {
                if socketOnly && policy != .cacheOnly { try await server.connect() }
                return try await cache.fetch(
                    server, text, variables, policy: policy == .cacheAndNetwork ? .networkOnly : policy)
            }
        } catch {
            try? await opened?.database.close()
            try? await server.shutdown()
            let failure = ClientFailure.error(error, "the query failed", secrets: secrets)
            guard printedCached else { throw failure }
            ClientFailure.warn("the cached response stands; the network's did not come: \(failure.message)")
            return
        }
        try? await opened?.database.close()
        try? await server.shutdown()
        print(try operation.printed(json: options.response(fetched)))
        if !fetched.errors.isEmpty {
            throw ClientFailure.graphQLErrors(fetched.errors, in: "query", secrets: secrets)
        }
    }

    /// Runs `body`, failing with `.timeout` after `seconds`: GQLServer bounds HTTP requests itself, this also
    /// bounds an operation over a WebSocket.
    private static func within<Answer: Sendable>(
        _ seconds: Double, kind: GQLQuery.OperationType, server: GQLServer,
        _ body: @escaping @Sendable () async throws -> Answer
    ) async throws -> Answer {
        let target = GQLServer.loggable(server.url ?? server.webSocketURL ?? "")
        return try await withThrowingTaskGroup(of: Answer.self) { group in
            group.addTask(operation: body)
            group.addTask {
                // A little later than GQLServer's own deadline, whose message is more precise.
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000) + 500))
                throw GQLError(.timeout, "the \(kind.rawValue) to \(target) got no answer within \(seconds) s")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }
}
