import Dispatch
import Foundation

/// SIGINT and SIGTERM as an `AsyncStream`, so a long-running command can stop cleanly (exit 0) instead of
/// being killed.
enum InterruptSignals {
    /// Stops the default handling of SIGINT and SIGTERM and yields each one that arrives from now on; when the
    /// stream ends, the default handling is back.
    static func stream() -> AsyncStream<Int32> {
        AsyncStream { continuation in
            let sources = Sources(
                [SIGINT, SIGTERM].map { number in
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                    source.setEventHandler { continuation.yield(number) }
                    source.resume()
                    return source
                })
            continuation.onTermination = { _ in
                sources.cancel()
                for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
            }
        }
    }

    /// The dispatch sources, kept alive until the stream ends.
    ///
    /// `@unchecked Sendable`: the array is immutable after `init`, and `cancel()` of a dispatch source may be
    /// called from any thread (libdispatch's `dispatch_source_cancel` is thread-safe).
    private final class Sources: @unchecked Sendable {
        let sources: [any DispatchSourceSignal]

        init(_ sources: [any DispatchSourceSignal]) {
            self.sources = sources
        }

        func cancel() {
            for source in sources { source.cancel() }
        }
    }
}
