import Logging
import Synchronization

/// How much the toolkit's own loggers say. Silent by default.
///
/// Log lines go through swift-log, so they reach whatever `LoggingSystem` the app bootstrapped.
/// Secrets (tokens, keys, passwords, signatures) never reach a log line at any level.
///
/// ```swift
/// GQLDebug.level(.all)     // every SQL statement and request
/// GQLDebug.level(.error)   // failures only
/// GQLDebug.level(.none)    // silent (the default)
/// ```
public enum GQLDebug {
    /// A verbosity.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        /// Nothing is logged.
        case none = 0
        /// Failures are logged.
        case error = 1
        /// Failures and every operation are logged.
        case all = 2

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    private static let current = Atomic<Int>(Level.none.rawValue)

    /// Sets the verbosity for every GraphQLite module.
    public static func level(_ level: Level) {
        current.store(level.rawValue, ordering: .relaxed)
    }

    /// The verbosity in force.
    public static var currentLevel: Level {
        Level(rawValue: current.load(ordering: .relaxed)) ?? .none
    }

    /// A logger for one module (`GraphQLite.GQLStore`, ...), gated by ``currentLevel``.
    package static func logger(_ module: String) -> GQLLogger { GQLLogger(label: "GraphQLite." + module) }
}

/// A module's logger: a swift-log `Logger` that says nothing unless ``GQLDebug`` allows it.
package struct GQLLogger: Sendable {
    package let logger: Logger

    package init(label: String) {
        var logger = Logger(label: label)
        logger.logLevel = .trace
        self.logger = logger
    }

    /// Whether `.all` is on, so callers can skip building expensive messages.
    package var isVerbose: Bool { GQLDebug.currentLevel == .all }

    package func error(_ message: @autoclosure () -> String, metadata: Logger.Metadata? = nil) {
        guard GQLDebug.currentLevel >= .error else { return }
        logger.error("\(message())", metadata: metadata)
    }

    package func debug(_ message: @autoclosure () -> String, metadata: Logger.Metadata? = nil) {
        guard GQLDebug.currentLevel == .all else { return }
        logger.debug("\(message())", metadata: metadata)
    }
}
