import Foundation
import GQLCore

extension GQLServer {
    /// Where a server's WebSocket connection stands. Observe it with ``GQLServer/connectionStates``.
    ///
    /// ```swift
    /// for await state in server.connectionStates {
    ///     if case .reconnecting(let attempt, let delay) = state { print("retry \(attempt) in \(delay)") }
    /// }
    /// ```
    public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
        /// No socket is open and none is wanted (before the first use, or after ``GQLServer/disconnect()``).
        case disconnected
        /// A socket is being opened and the server's acknowledgement awaited.
        case connecting
        /// The server acknowledged the connection; subscriptions are live.
        case connected
        /// The connection was lost; attempt number `attempt` starts after `delay`.
        case reconnecting(attempt: Int, delay: Duration)
        /// The connection ended for good (refused credentials, a protocol error, attempts exhausted); a call to
        /// ``GQLServer/connect()`` or a new subscription starts over.
        case failed(GQLError)

        public var description: String {
            switch self {
            case .disconnected: "disconnected"
            case .connecting: "connecting"
            case .connected: "connected"
            case .reconnecting(let attempt, let delay): "reconnecting (attempt \(attempt) in \(delay))"
            case .failed(let error): "failed: \(error.message)"
            }
        }
    }

    /// How a lost WebSocket connection is retried: exponential delays with jitter (a ``GQLBackoff``), optionally
    /// bounded.
    ///
    /// Delay *n* is a random time between half and all of `min(maximumDelay, initialDelay × multiplierⁿ⁻¹)`, so
    /// clients that lost the same server do not come back in step. The delays grow with every loss and start over
    /// once a connection has stayed up for a ping interval, so a server that accepts and then drops every
    /// connection is retried ever more slowly, but never given up on. Only attempts that fail to connect and be
    /// acknowledged, in a row, count against `maximumAttempts`.
    ///
    /// ```swift
    /// var configuration = GQLServer.Configuration()
    /// configuration.reconnect = .init(initialDelay: .milliseconds(200), maximumDelay: .seconds(10), maximumAttempts: 20)
    /// ```
    public struct Reconnect: Sendable, Hashable {
        /// The delay before the first attempt. Default 0.5 s.
        public var initialDelay: Duration
        /// The longest delay between attempts. Default 30 s.
        public var maximumDelay: Duration
        /// How much each delay grows. Default 2.
        public var multiplier: Double
        /// How many attempts in a row may fail to connect and be acknowledged before the connection is
        /// ``ConnectionState/failed(_:)``; `nil`, the default, retries for as long as subscriptions want the
        /// connection. An acknowledged connection starts the count over, however soon it is lost again.
        public var maximumAttempts: Int?

        public init(
            initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30), multiplier: Double = 2,
            maximumAttempts: Int? = nil
        ) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.multiplier = multiplier
            self.maximumAttempts = maximumAttempts
        }

        /// No reconnection: a lost connection fails its subscriptions.
        public static let never = Reconnect(maximumAttempts: 0)

        /// The delays as a ``GQLBackoff`` (half of each delay random).
        var backoff: GQLBackoff {
            GQLBackoff(initialDelay: initialDelay, maximumDelay: maximumDelay, multiplier: multiplier, jitter: 0.5)
        }

        /// The delay before attempt `attempt` (1-based), given a uniform random number in 0..<1.
        func delay(attempt: Int, random: Double) -> Duration {
            backoff.delay(attempt: attempt, random: random)
        }
    }
}
