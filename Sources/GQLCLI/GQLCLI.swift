import ArgumentParser
import GQLStore

/// `gql-cli`: inspects GraphQLite databases, tours the store and serves a development GraphQL API from a shell.
///
/// ```
/// gql-cli db tables app.sqlite
/// gql-cli db query app.sqlite "SELECT name, age FROM User WHERE age > ?" --arg 40
/// gql-cli demo
/// gql-cli serve --db dev.sqlite --api-key da2-local
/// gql-cli documents show Queries CreateObject
/// gql-cli query --url http://127.0.0.1:4000/graphql "{ listObjects { items { objectId } } }"
/// gql-cli subscribe --url http://127.0.0.1:4000/graphql "subscription { onCreateObjects { objectId } }"
/// gql-cli storage upload --endpoint http://127.0.0.1:9000 photo.png uploads/photo.png
/// gql-cli auth signin --domain example.eu.auth0.com --client-id abc --email ann@example.com --password-stdin
/// gql-cli cache stats --db cache.sqlite
/// gql-cli codegen --schema schema.graphql --documents GraphQL --output Sources/App/Generated
/// ```
@main
struct GQLCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gql-cli",
        abstract: "Drives every GraphQLite layer from a shell.",
        subcommands: [
            DatabaseCommand.self, DocumentsCommand.self, DemoCommand.self, ServeCommand.self, QueryCommand.self,
            MutateCommand.self, SubscribeCommand.self, StorageCommand.self, SyncCommand.self, AuthCommand.self,
            PushCommand.self, CacheCommand.self, CodegenCommand.self,
        ]
    )

    /// ArgumentParser's `main()`, with every asynchronous command run under ``InterruptSignals``: SIGINT and SIGTERM
    /// cancel its work and end the process within a second or two.
    ///
    /// gql-cli owns its process, so before anything uses SQLite it turns SQLite's memory statistics off
    /// (``GQLDatabase/configureSQLiteProcess(memoryStatistics:)``), which spares each of SQLite's allocations a
    /// process-wide mutex (`gql-cli serve`'s reads, ServerBench).
    static func main() async {
        GQLDatabase.configureSQLiteProcess(memoryStatistics: false)
        do {
            var command = try parseAsRoot()
            if let asynchronous = command as? any AsyncParsableCommand {
                try await InterruptSignals.run(asynchronous)
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
