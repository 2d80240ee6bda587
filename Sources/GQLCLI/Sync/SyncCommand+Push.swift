import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync push DB --url URL`: delivers the outbox's pending items in call order, then exits.
    ///
    /// On a terminal a progress bar counts the items; elsewhere each item is a line (`sent 12 UpdateNote`,
    /// `failed 13 UpdateNote: …`). The command stops with an error once the server is unreachable, leaving
    /// what is left queued.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the outbox's pending items in call order; failed items are set aside, not retried.")

        @OptionGroup var options: SyncOptions

        func run() async throws {
            let (sync, server) = try options.engine(delivers: true)
            let total = sync.pendingCount
            let bar = ProgressBar(label: "push")
            let plain = isatty(STDERR_FILENO) != 1
            var outcome: String?
            // The first status is the current one: items the loop settled before it are in its counts.
            for await status in sync.status {
                switch status.event {
                case .sent(let id, let name)?:
                    if plain { print("sent \(id) \(name)") }
                case .failed(let id, let failure)?:
                    if plain { print("failed \(id): \(failure.message)") }
                case .offline?:
                    outcome = "the server is unreachable; \(status.pendingCount) item(s) stay queued"
                case .stopped?:
                    outcome = "the push stopped with \(status.pendingCount) item(s) queued"
                default: break
                }
                bar.update(done: Int64(total - status.pendingCount), total: Int64(total), bytes: false)
                if outcome != nil || status.pendingCount == 0 { break }
            }
            bar.finish()
            let failed = (try? sync.failedItems().count) ?? 0
            let pending = sync.pendingCount
            await SyncOptions.close(sync, server)
            if let outcome { throw CLIError(outcome) }
            print("pushed: \(total - pending) delivered or set aside, \(pending) pending, \(failed) failed")
        }
    }
}
