import ArgumentParser
import Foundation
import GQLCache
import GQLNet

/// `gql-cli subscribe`: connects, starts one subscription and prints each event as a line of JSON until
/// interrupted or `--count` events arrived.
///
/// ```
/// gql-cli subscribe --url http://127.0.0.1:4000/graphql --appsync-key da2-local \
///     'subscription { onCreateObjects { objectId text } }' --count 1
/// {"data":{"onCreateObjects":{"objectId":"demo-1","text":"Hello"}}}
/// ```
struct SubscribeCommand: AsyncParsableCommand, InterruptibleCommand {
    static let interruptEnding = InterruptEnding.stop

    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Run a GraphQL subscription and print each event as a line of JSON.",
        discussion: """
            Connects first, failing at once when the server is unreachable or refuses the credentials, then \
            prints each event's response object ({"data": …, "errors": […]}) as one line of compact JSON, \
            until SIGINT or SIGTERM (exit 0), --count events, or the server ending the subscription (exit 0). \
            The WebSocket is --ws-url, or --url with a ws/wss scheme. \(ClientHelp.transport) A lost \
            connection is reopened with growing delays (0.5 s up to 30 s) and the subscription resent, for as \
            long as it takes unless --max-reconnects bounds the failed attempts in a row.

            \(ClientHelp.exitStatus(subscribing: true))

            With --cache FILE each event is also written into a GQLCache kept in that SQLite file (its objects \
            become records that gql-cli query --cache answers from), and --verbose adds "source": "network" to \
            each line; the subscription sent asks for __typename in every selection set.

            Example: gql-cli subscribe --url http://127.0.0.1:4000/graphql \
            'subscription { onCreateObjects { objectId text } }' --count 2
            """
    )

    @OptionGroup var client: ClientOptions
    @OptionGroup var operation: OperationOptions
    @OptionGroup var cache: CacheOptions

    @Option(help: ArgumentHelp("Stop after this many events.", valueName: "n"))
    var count: Int?

    @Option(
        name: .customLong("max-reconnects"),
        help: ArgumentHelp(
            "Give up after this many failed reconnection attempts in a row (default: never).", valueName: "n"))
    var maxReconnects: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let maxReconnects, maxReconnects < 0 { throw ValidationError("--max-reconnects must be 0 or more") }
        if operation.pretty { throw ValidationError("--pretty does not apply to subscribe: events are one line each") }
        if cache.policy != nil {
            throw ValidationError("--policy does not apply to subscribe: every event comes from the network")
        }
    }

    func run() async throws {
        // SIGINT and SIGTERM cancel this task (InterruptSignals, `.stop`): connecting or iterating ends, exit 0.
        let text = try ClientFailure.badOptions { try operation.operationText(for: .subscription) }
        let variables = try operation.parsedVariables().mapValues { $0 as any GQLValueConvertible }
        let secrets = client.secrets
        let server = try client.makeServer(subscribing: true, reconnectAttempts: maxReconnects)
        let cached = try ClientFailure.badOptions { try cache.open() }
        do {
            do {
                try await server.connect()
            } catch {
                throw ClientFailure.error(error, "cannot subscribe", secrets: secrets)
            }
            var received = 0
            /// Prints one event; whether --count is reached.
            func print(_ response: GQLValue) throws -> Bool {
                FileHandle.standardOutput.write(Data((try TerminalText.json(response) + "\n").utf8))
                received += 1
                return count.map { received >= $0 } ?? false
            }
            do {
                if let cached {
                    for try await event in cached.subscribe(server, text, variables) {
                        if try print(cache.response(event)) { break }
                    }
                } else {
                    for try await event in server.subscription(text, variables) {
                        if try print(event.jsonValue) { break }
                    }
                }
            } catch let failure as GQLResult.Failure {
                throw ClientFailure.graphQLErrors(failure.errors, in: "subscription", secrets: secrets)
            } catch {
                throw ClientFailure.error(error, "the subscription failed", secrets: secrets)
            }
        } catch {
            try? await server.shutdown()
            throw error
        }
        try? await server.shutdown()
    }
}
