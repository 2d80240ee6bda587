import GQLCore

extension SocketStateMachine {
    /// Whether a ready socket's server is still there, and whether its reading is paused for a lagging caller: the
    /// keep-alive's clock (pings, `ka`s, the silence allowed) and the pause's, one socket at a time.
    ///
    /// ``SocketStateMachine`` owns one and tells it what the socket did; it answers with the actions for the
    /// keep-alive and the pause, and says when the server has been silent too long (the machine then drops the
    /// connection). Its state is its own: nothing outside reads or sets it but through these methods.
    struct Liveness: Sendable {
        /// The protocol's ping (graphql-transport-ws), or nil when the server sends `ka`s (legacy, AppSync).
        private let ping: GQLValue?
        private let pingInterval: Duration
        private let defaultKeepAliveTimeout: Duration
        private let maximumSharedPause: Duration
        /// How long the server may stay silent: the settings' value, or the one its acknowledgement announced.
        private(set) var keepAliveTimeout: Duration
        /// When the server last showed the protocol is alive (see ``ServerMessage/isActivity``).
        private var lastReceived: Instant?
        private var pingSentAt: Instant?
        private var sawKeepAlive = false
        /// Whether the caller lags behind the results: reading is paused, and silence is not the server's.
        private(set) var consumerLags = false
        /// While reading is paused for a lagging caller and other operations share the socket: when the pause ends.
        private var sharedPauseDeadline: Instant?
        /// The pause for the current lag ended while the caller still lagged: reading goes on until it catches up.
        private var sharedPauseEnded = false

        init(settings: Settings) {
            ping = settings.codec.ping
            pingInterval = settings.pingInterval
            defaultKeepAliveTimeout = settings.keepAliveTimeout
            maximumSharedPause = settings.maximumSharedPause
            keepAliveTimeout = settings.keepAliveTimeout
        }

        /// Whether reading is paused for a lagging caller now.
        var readingPaused: Bool { consumerLags && !sharedPauseEnded }

        /// A new socket is being opened: nothing heard, no ping out, no `ka` seen yet.
        mutating func socketOpening() {
            lastReceived = nil
            pingSentAt = nil
            sawKeepAlive = false
        }

        /// The socket opened, or the server showed the protocol alive: the idle time starts over.
        mutating func heard(at now: Instant) {
            lastReceived = now
            pingSentAt = nil
        }

        /// `connection_ack`, with the keep-alive timeout it announced (AppSync) or none.
        mutating func acknowledged(keepAliveTimeout timeout: Duration?) {
            // A server asking for less than a second would have every connection dropped at once.
            keepAliveTimeout = timeout.map { max($0, .seconds(1)) } ?? defaultKeepAliveTimeout
            // A timeout announced in the ack (AppSync) runs from the ack; otherwise from the first `ka`.
            sawKeepAlive = timeout != nil
        }

        /// A `ka` arrived: whether it was the first (its deadline starts now, so the timer needs recomputing).
        mutating func keepAliveReceived() -> Bool {
            defer { sawKeepAlive = true }
            return !sawKeepAlive
        }

        /// The caller began to lag or caught up (a change, never a repeat); `ready`: the socket is acknowledged,
        /// `operations`: how many share it.
        mutating func consumerLagging(_ lagging: Bool, ready: Bool, operations: Int, at now: Instant) -> [Action] {
            let wasPaused = readingPaused
            consumerLags = lagging
            sharedPauseDeadline = nil
            sharedPauseEnded = false
            guard ready else { return [] }
            if lagging { return [.reading(paused: true)] + boundSharedPause(operations: operations, at: now) }
            guard wasPaused else { return [] }
            heard(at: now)
            return [.reading(paused: false), .reschedule]
        }

        /// While reading is paused on a ready socket that `operations` operations share, the pause ends by
        /// ``Settings/maximumSharedPause`` (see there).
        mutating func boundSharedPause(operations: Int, at now: Instant) -> [Action] {
            guard readingPaused, sharedPauseDeadline == nil, operations > 1 else { return [] }
            sharedPauseDeadline = now + maximumSharedPause
            return [.reschedule]
        }

        /// Whether a ready socket's server has been silent past the keep-alive timeout at `now` (never while
        /// reading is paused: the silence is then ours).
        func serverIsSilent(at now: Instant) -> Bool {
            guard !readingPaused, let deadline = keepAliveDeadline else { return false }
            return now >= deadline
        }

        /// The time passed `now` on a ready socket the server is not silent on: the shared pause's end, a ping.
        mutating func tick(at now: Instant) -> [Action] {
            if readingPaused {
                guard let deadline = sharedPauseDeadline, now >= deadline else { return [] }
                // Other operations waited long enough behind the lagging one: reading resumes for them, and the
                // idle time starts over.
                sharedPauseEnded = true
                sharedPauseDeadline = nil
                heard(at: now)
                return [.reading(paused: false), .reschedule]
            }
            if let ping, pingSentAt == nil, let last = lastReceived, now >= last + pingInterval {
                pingSentAt = now
                return [.send(ping), .reschedule]
            }
            return []
        }

        /// When ``tick(at:)`` or the silence next has something to do on a ready socket, or nil.
        var nextDeadline: Instant? {
            if readingPaused { return sharedPauseDeadline }
            var deadlines: [Instant] = []
            if let deadline = keepAliveDeadline { deadlines.append(deadline) }
            if ping != nil, pingSentAt == nil, let last = lastReceived {
                deadlines.append(last + pingInterval)
            }
            return deadlines.min()
        }

        /// When a silent server counts as gone: a ping unanswered for the keep-alive timeout
        /// (graphql-transport-ws), or no `ka` for that long once the first arrived (legacy, AppSync).
        private var keepAliveDeadline: Instant? {
            if ping != nil {
                return pingSentAt.map { $0 + keepAliveTimeout }
            }
            guard sawKeepAlive, let last = lastReceived else { return nil }
            return last + keepAliveTimeout
        }
    }
}
