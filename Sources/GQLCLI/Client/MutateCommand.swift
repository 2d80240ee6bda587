import ArgumentParser
import GQLNet

/// `gql-cli mutate`: runs one GraphQL mutation and prints the response object as JSON.
///
/// ```
/// gql-cli mutate --url http://127.0.0.1:4000/graphql \
///     'mutation ($input: CreateObjectsInput!) { createObjects(input: $input) { objectId } }' \
///     --variables '{"input": {"objectId": "demo-1", "text": "Hello"}}'
/// {"data":{"createObjects":{"objectId":"demo-1"}}}
/// ```
struct MutateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mutate",
        abstract: "Run a GraphQL mutation and print the response as JSON.",
        discussion: ClientHelp.operationDiscussion(
            example: """
                gql-cli mutate --url http://127.0.0.1:4000/graphql --documents Queries CreateObject \
                --var 'input={"objectId": "a", "text": "Hello"}'
                """)
    )

    @OptionGroup var client: ClientOptions
    @OptionGroup var operation: OperationOptions

    func run() async throws {
        try await OperationRunner.run(.mutation, client: client, operation: operation)
    }
}
