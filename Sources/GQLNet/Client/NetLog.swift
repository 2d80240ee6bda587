import GQLCore
import Logging

/// Where GQLNet logs: the caller's `Logger` (``GQLServer/Configuration/logger``), used as given, or when there is
/// none the toolkit's `GraphQLite.GQLNet` logger, which ``GQLDebug`` gates (silent by default; failures at
/// `.error`; every request, socket and reconnect at `.all`).
///
/// Lines carry the method, the URL without query or user information, statuses, sizes and durations: never
/// headers, payloads, variables or bodies, which may hold credentials.
struct NetLog: Sendable {
    private let custom: Logger?
    private let toolkit: GQLLogger

    init(_ logger: Logger?) {
        self.custom = logger
        self.toolkit = GQLDebug.logger("GQLNet")
    }

    /// Routine events: a request answered, a socket opened or closed, a reconnect scheduled.
    func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Logger.Metadata = [:]) {
        if let custom {
            custom.debug("\(message())", metadata: metadata())
        } else if toolkit.isVerbose {
            // Checked first: the metadata (string interpolations) is built only when the line is written.
            toolkit.debug(message(), metadata: metadata())
        }
    }

    /// Something went wrong that the caller also learns from an error or a state.
    func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Logger.Metadata = [:]) {
        if let custom {
            custom.warning("\(message())", metadata: metadata())
        } else if GQLDebug.currentLevel >= .error {
            toolkit.error(message(), metadata: metadata())
        }
    }
}
