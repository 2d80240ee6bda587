import ArgumentParser
import Foundation
import GQLSync

extension SyncCommand {
    /// `gql-cli sync push DB --url URL`: delivers the outbox's pending items in call order, then exits.
    ///
    /// On a terminal a progress bar counts the items; elsewhere each item is a line (`sent 12 UpdateNote`,
    /// `failed 13 UpdateNote: …`). The command stops with an error, naming the reason and leaving what is left
    /// queued, once the server is unreachable, or answers without being of use (`{"data": null}`, HTML, 5xx …)
    /// ``uselessAnswers`` times in a row or asks for a wait past ``longestWait``: an app's engine keeps retrying
    /// such a server, a command ends.
    struct Push: AsyncParsableCommand {
        /// Transient answers in a row (the server reached) after which the push gives up.
        static let uselessAnswers = 3
        /// The longest back-off (or `Retry-After`) the push waits out.
        static let longestWait: Duration = .seconds(30)

        static let configuration = CommandConfiguration(
            abstract: "Send the outbox's pending items in call order; failed items are set aside, not retried.")

        @OptionGroup var options: SyncOptions

        func run() async throws {
            let (sync, server) = try await options.engine(delivers: true)
            let total = sync.pendingCount
            let bar = ProgressBar(label: "push")
            let plain = isatty(STDERR_FILENO) != 1
            // Prints each item's fate; ends with a message when the server is unreachable or the engine stopped.
            let printer = Task { () -> String? in
                var useless = 0
                for await status in sync.status {
                    switch status.event {
                    case .sent(let id, let name)?:
                        useless = 0
                        if plain { print("sent \(id) \(name)") }
                    case .failed(let id, let failure)?:
                        useless = 0
                        if plain {
                            print(
                                "failed \(id): \(TerminalText.escaped(failure.message, limit: TextTable.maximumCellWidth))"
                            )
                        }
                    case .retrying(_, _, _, let failure)? where !status.isOnline:
                        let reason = TerminalText.escaped(failure.message, limit: TextTable.maximumCellWidth)
                        return "the server is unreachable (\(reason)); \(status.pendingCount) item(s) stay queued"
                    case .retrying(_, _, let delay, let failure)?:
                        useless += 1
                        if useless >= Self.uselessAnswers || delay > Self.longestWait {
                            let reason = TerminalText.escaped(failure.message, limit: TextTable.maximumCellWidth)
                            return "the server answers, but not usefully (\(reason)); "
                                + "\(status.pendingCount) item(s) stay queued"
                        }
                    case .offline?:
                        // The `.retrying` with the reason follows at once when the head item is kept.
                        continue
                    case .drained?:
                        return nil
                    case .claimFailed(_, let failure)?:
                        // The engine would back off and try again for ever; a command says what is wrong instead.
                        return
                            "the outbox cannot be read (\(failure.message)); \(status.pendingCount) item(s) stay queued"
                    default: break
                    }
                    // Also the first status, which has no event: the engine may have gone offline before this
                    // loop listened, and then no `.offline` event comes (the push would wait for ever).
                    if !status.isOnline {
                        return "the server is unreachable; \(status.pendingCount) item(s) stay queued"
                    }
                    bar.update(done: Int64(total - status.pendingCount), total: Int64(total), bytes: false)
                }
                return nil
            }
            // drain() returns only after the outbox recorded every delivered item, so none is sent twice later.
            let outcome = await withTaskGroup(of: String?.self) { group -> String? in
                group.addTask { await printer.value }
                group.addTask {
                    do {
                        try await sync.drain()
                        return nil
                    } catch {
                        return "the push stopped: \(error)"
                    }
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            bar.finish()
            let failed = (try? sync.failedItems().count) ?? 0
            let pending = sync.pendingCount
            await SyncOptions.close(sync, server)
            _ = await printer.value  // the statuses end with the engine: every line is out
            if let outcome { throw CLIError(outcome) }
            print("pushed: \(total - pending) delivered or set aside, \(pending) pending, \(failed) failed")
        }
    }
}
