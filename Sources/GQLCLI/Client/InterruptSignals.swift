import ArgumentParser
import Dispatch
import Foundation
import GQLCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a command ends on SIGINT or SIGTERM.
enum InterruptEnding: Sendable {
    /// The signal is how the command normally ends (`subscribe`): its work is cancelled, and it exits 0.
    case stop
    /// The signal interrupts work that was meant to finish (`query`, `storage get`, `sync push` …): the work is
    /// cancelled (so it can remove what it leaves half-written), and the command exits with 128 + the signal's
    /// number, as a shell reports a command it killed: 130 for SIGINT, 143 for SIGTERM.
    case interrupt
    /// The command stops on the signal itself (`serve`'s graceful shutdown, which exits 0); only the deadline below
    /// applies.
    case own
}

/// A command that says how it ends on SIGINT and SIGTERM; every other asynchronous command is ``InterruptEnding/interrupt``.
protocol InterruptibleCommand {
    static var interruptEnding: InterruptEnding { get }
}

/// SIGINT and SIGTERM for every asynchronous command: the command's work runs in a task that the first signal
/// cancels, and the process ends at the latest ``graceMilliseconds`` after it (or at a second signal), whatever the work is
/// doing — a task that ignores cancellation, or a thread blocked in a call, cannot keep it alive.
///
/// The signals are watched by dispatch sources on a global queue, not by a task, so a busy cooperative thread pool
/// cannot delay them.
///
/// ```swift
/// try await InterruptSignals.run(command)   // GQLCLI.main()
/// ```
enum InterruptSignals {
    /// How long cancelled work may take to wind down before the process exits anyway.
    static let graceMilliseconds = 1_500

    /// Runs `command`; on a signal cancels it and ends as its ``InterruptEnding`` says.
    static func run(_ command: sending any AsyncParsableCommand) async throws {
        let ending = (type(of: command) as? any InterruptibleCommand.Type)?.interruptEnding ?? .interrupt
        let watch = Watch(ending: ending)
        // Watching before the work starts: a signal in between cancels it as soon as it exists.
        let started = GQLLocked<Task<Void, any Error>?>(nil)
        watch.start { started.withLock { $0 }?.cancel() }
        let work = Task {
            var command = command
            try await command.run()
        }
        started.withLock { $0 = work }
        if watch.received != nil, ending != .own { work.cancel() }
        let result = await work.result
        guard let number = watch.received else { return try result.get() }
        switch ending {
        case .stop:
            return
        case .own:
            return try result.get()
        case .interrupt:
            throw ExitCode(128 + number)
        }
    }

    /// The dispatch sources and the first signal received, behind one ``GQLLocked``; dispatch sources may be
    /// cancelled from any thread.
    private final class Watch: Sendable {
        private struct State {
            var first: Int32?
            var sources: [any DispatchSourceSignal] = []
        }

        let ending: InterruptEnding
        private let state = GQLLocked(State())

        init(ending: InterruptEnding) {
            self.ending = ending
        }

        var received: Int32? { state.withLock { $0.first } }

        /// Takes SIGINT and SIGTERM over (a `serve` command's own handlers see them too).
        func start(cancel: @escaping @Sendable () -> Void) {
            state.withLock { state in
                for number in [SIGINT, SIGTERM] {
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                    source.setEventHandler { [self] in self.signalled(number, cancel: cancel) }
                    source.resume()
                    state.sources.append(source)
                }
            }
        }

        private func signalled(_ number: Int32, cancel: @Sendable () -> Void) {
            let isFirst = state.withLock { state in
                defer { if state.first == nil { state.first = number } }
                return state.first == nil
            }
            let status: Int32 = ending == .interrupt ? 128 + number : 0
            guard isFirst else {
                // A second signal: the user insists.
                Self.exitNow(status, "gql-cli: stopped by a second signal")
            }
            if ending != .own { cancel() }
            let grace = InterruptSignals.graceMilliseconds
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(grace)) {
                Self.exitNow(status, "gql-cli: the command did not stop within \(grace) ms of the signal")
            }
        }

        /// Ends the process at once with `status` (standard output flushed, `note` on standard error).
        static func exitNow(_ status: Int32, _ note: String) -> Never {
            fflush(nil)  // every stream: print() buffers standard output
            FileHandle.standardError.write(Data((note + "\n").utf8))
            _exit(status)
        }
    }
}
