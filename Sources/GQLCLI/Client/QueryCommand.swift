import ArgumentParser
import GQLNet

/// `gql-cli query`: runs one GraphQL query and prints the response object as JSON.
///
/// ```
/// gql-cli query --url http://127.0.0.1:4000/graphql --appsync-key da2-local \
///     'query ($id: ID!) { getObjects(objectId: $id) { objectId text } }' --var id=demo-1
/// {"data":{"getObjects":{"objectId":"demo-1","text":"Hello"}}}
/// ```
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a GraphQL query and print the response as JSON.",
        discussion: ClientHelp.operationDiscussion(
            example: """
                gql-cli query --url http://127.0.0.1:4000/graphql '{ listObjects { items { objectId } } }'

                With --cache FILE the query goes through a GQLCache kept in that SQLite file, by --policy \
                (cache-first by default; cache-and-network prints the cached response, then the network's, or \
                a note when the network fails), \
                and --verbose adds "source": "cache" or "network" (and "stale": true) to each response. The \
                query sent asks for __typename in every selection set, so the responses show it.
                """)
    )

    @OptionGroup var client: ClientOptions
    @OptionGroup var operation: OperationOptions
    @OptionGroup var cache: CacheOptions

    func run() async throws {
        if cache.file != nil {
            try await OperationRunner.runCached(client: client, operation: operation, cache: cache)
        } else {
            try await OperationRunner.run(.query, client: client, operation: operation)
        }
    }
}
