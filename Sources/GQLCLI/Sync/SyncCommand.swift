import ArgumentParser

/// `gql-cli sync …`: drives a GQLSync outbox from a shell.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Deliver a GQLSync outbox, pull server changes, and manage failed items.",
        subcommands: [Status.self, Push.self, Pull.self, Failed.self, Retry.self, Drop.self, EnqueueLoop.self]
    )
}
