import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync status DB --url URL`: the outbox's counts and pull cursors, without sending anything or
    /// changing the file.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show the outbox's pending and failed items and the pull cursors (sends nothing, changes nothing).")

        @OptionGroup var options: SyncOptions

        @Flag(
            help: """
                Print one JSON object: {"engine", "pending", "failed", "cursors": {query: {"startedAt" (ms), "date"}}} \
                (a pull with variables: "query {variables}": {…, "variables"}).
                """)
        var json = false

        func run() async throws {
            // A read-only look: no engine is opened, so nothing is migrated, written or made beside the file.
            let name = try await options.existingEngineName()
            let summary: GQLSync.OutboxSummary
            do {
                summary = try await GQLSync.outboxSummary(inFile: options.path, engine: name)
            } catch {
                throw CLIError("cannot read the outbox in \(options.path)", error)
            }
            let (pending, failed) = (summary.pendingCount, summary.failedCount)
            let cursors = summary.cursors.map { cursor in
                (cursor, GQLDate.string(from: Date(timeIntervalSince1970: Double(cursor.startedAt) / 1000)))
            }
            if json {
                var byQuery: GQLValues = [:]
                for (cursor, date) in cursors {
                    var entry: GQLValues = ["startedAt": .int(cursor.startedAt), "date": .string(date)]
                    if !cursor.variables.isEmpty { entry["variables"] = try GQLValue(json: cursor.variables) }
                    byQuery[Self.label(cursor)] = .object(entry)
                }
                let status: GQLValue = [
                    "engine": .string(name), "pending": .int(Int64(pending)),
                    "failed": .int(Int64(failed)), "cursors": .object(byQuery),
                ]
                print(try TerminalText.json(status))
                return
            }
            print("engine \(name)")
            print("pending \(pending)")
            print("failed \(failed)")
            for (cursor, date) in cursors { print("cursor \(Self.label(cursor)) \(cursor.startedAt) (\(date))") }
        }

        /// A cursor's query, and the variables of its pulls when they had some: `SyncNotes {"filter":{…}}`.
        static func label(_ cursor: GQLSync.PullCursor) -> String {
            cursor.variables.isEmpty ? cursor.query : "\(cursor.query) \(cursor.variables)"
        }
    }
}
