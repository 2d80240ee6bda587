import ArgumentParser

/// `gql-cli sync …`: drives a GQLSync outbox from a shell.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Queue mutations in a GQLSync outbox and deliver them.",
        subcommands: [EnqueueLoop.self]
    )
}
