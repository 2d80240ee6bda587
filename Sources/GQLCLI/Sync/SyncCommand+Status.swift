import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync status DB --url URL`: the outbox's counts and pull cursors, without sending anything.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the outbox's pending and failed items and the pull cursors (sends nothing).")

        @OptionGroup var options: SyncOptions

        func run() async throws {
            let (sync, server) = try options.engine(delivers: false)
            print("engine \(sync.name)")
            print("pending \(sync.pendingCount)")
            print("failed \(try sync.failedItems().count)")
            for (query, startedAt) in try sync.pullCursors().sorted(by: { $0.key < $1.key }) {
                let date = Date(timeIntervalSince1970: Double(startedAt) / 1000)
                print("cursor \(query) \(startedAt) (\(GQLDate.string(from: date)))")
            }
            await SyncOptions.close(sync, server)
        }
    }
}
