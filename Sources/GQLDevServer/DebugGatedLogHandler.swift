import GQLCore
import Logging

/// The server's logger when the caller gives none: the process's swift-log handler for `GraphQLite.GQLDevServer`,
/// let through only as far as ``GQLDebug`` allows (`.none`: nothing, `.error`: errors, `.all`: debug and above),
/// so `GQLDebug.level(.all)` turns the dev server's log on like every other module's.
///
/// ```swift
/// GQLDebug.level(.all)
/// let server = try GQLDevServer(configuration: configuration)   // logs connections and requests
/// ```
package struct DebugGatedLogHandler: LogHandler {
    private var inner: any LogHandler

    package init(label: String) {
        inner = Logger(label: label).handler
    }

    /// The lowest level ``GQLDebug``'s current verbosity lets through; setting it has no effect.
    package var logLevel: Logger.Level {
        get {
            switch GQLDebug.currentLevel {
            case .all: .debug
            case .error: .error
            case .none: .critical
            }
        }
        set {}
    }

    package var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) {
        guard GQLDebug.currentLevel != .none, event.level >= logLevel else { return }
        inner.log(event: event)
    }

    /// A logger for `label` that ``GQLDebug`` governs.
    package static func logger(_ label: String = "GraphQLite.GQLDevServer") -> Logger {
        Logger(label: label) { label in DebugGatedLogHandler(label: label) }
    }
}
