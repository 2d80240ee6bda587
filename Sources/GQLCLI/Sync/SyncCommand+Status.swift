import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync status DB --url URL`: the outbox's counts and pull cursors, without sending anything.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the outbox's pending and failed items and the pull cursors (sends nothing).")

        @OptionGroup var options: SyncOptions

        @Flag(
            help: """
                Print one JSON object: {"engine", "pending", "failed", "cursors": {query: {"startedAt" (ms), "date"}}}.
                """)
        var json = false

        func run() async throws {
            let (sync, server) = try await options.engine(delivers: false)
            let (name, pending, failed) = (sync.name, sync.pendingCount, try sync.failedItems().count)
            let cursors = try sync.pullCursors().sorted(by: { $0.key < $1.key }).map { query, startedAt in
                (query, startedAt, GQLDate.string(from: Date(timeIntervalSince1970: Double(startedAt) / 1000)))
            }
            await SyncOptions.close(sync, server)
            if json {
                var byQuery: GQLValues = [:]
                for (query, startedAt, date) in cursors {
                    byQuery[query] = ["startedAt": .int(startedAt), "date": .string(date)]
                }
                let status: GQLValue = [
                    "engine": .string(name), "pending": .int(Int64(pending)),
                    "failed": .int(Int64(failed)), "cursors": .object(byQuery),
                ]
                print(try status.jsonString())
                return
            }
            print("engine \(name)")
            print("pending \(pending)")
            print("failed \(failed)")
            for (query, startedAt, date) in cursors { print("cursor \(query) \(startedAt) (\(date))") }
        }
    }
}
