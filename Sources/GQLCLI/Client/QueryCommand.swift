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
                """)
    )

    @OptionGroup var client: ClientOptions
    @OptionGroup var operation: OperationOptions

    func run() async throws {
        try await OperationRunner.run(.query, client: client, operation: operation)
    }
}
