import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync failed DB --url URL`: the items the server refused for good.
    struct Failed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the items the server refused for good (id, operation, key, attempts, error).")

        @OptionGroup var options: SyncOptions

        @Flag(help: "Print JSON lines instead of a text table.")
        var json = false

        func run() async throws {
            let (sync, server) = try await options.engine(delivers: false)
            let items = try CLIError.guarding("cannot read the failed items") { try sync.failedItems() }
            await SyncOptions.close(sync, server)
            if json {
                for item in items {
                    let line: GQLValue = [
                        "id": .int(item.id), "name": .string(item.name), "key": item.key ?? .null,
                        "attempts": .int(Int64(item.attempts)), "error": .string(item.failure.message),
                        "variables": .object(item.variables),
                    ]
                    print(try TerminalText.json(line))
                }
                return
            }
            let rows: [[GQLValue]] = items.map {
                [.int($0.id), .string($0.name), $0.key ?? .null, .int(Int64($0.attempts)), .string($0.failure.message)]
            }
            print(TextTable(columns: ["id", "name", "key", "attempts", "error"], rows: rows).rendered, terminator: "")
        }
    }

    /// `gql-cli sync retry DB ID --url URL`: puts a failed item back in the queue at its place.
    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a failed item back in the queue, at its place in call order (sent by the next push).")

        @OptionGroup var options: SyncOptions

        @Argument(help: "The failed item's id (see gql-cli sync failed).")
        var id: Int64

        func run() async throws {
            let (sync, server) = try await options.engine(delivers: false)
            let result = Result { try sync.retry(id) }
            await SyncOptions.close(sync, server)
            try CLIError.guarding("cannot retry item \(id)") { try result.get() }
            print("queued \(id) again")
        }
    }

    /// `gql-cli sync drop DB ID --url URL`: removes a failed item for good.
    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a failed item for good.")

        @OptionGroup var options: SyncOptions

        @Argument(help: "The failed item's id (see gql-cli sync failed).")
        var id: Int64

        func run() async throws {
            let (sync, server) = try await options.engine(delivers: false)
            let result = Result { try sync.drop(id) }
            await SyncOptions.close(sync, server)
            try CLIError.guarding("cannot drop item \(id)") { try result.get() }
            print("dropped \(id)")
        }
    }
}
