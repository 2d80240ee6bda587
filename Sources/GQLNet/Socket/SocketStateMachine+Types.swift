import GQLCore

/// The values ``SocketStateMachine`` decides with: its operations, settings and phases (and the public state they
/// show), how operations end, and the actions it hands its driver.
extension SocketStateMachine {
    struct Operation: Sendable {
        let id: String
        /// The protocol's start message (`subscribe` or `start`), sent again after every reconnect.
        let startMessage: GQLValue
        /// Subscriptions survive reconnects; queries and mutations fail when their connection is lost.
        let isSubscription: Bool
    }

    /// The phase as the public connection state.
    var publicState: GQLServer.ConnectionState {
        switch phase {
        case .idle: .disconnected
        case .opening, .awaitingAck: .connecting
        case .ready: .connected
        case .waiting(let attempt, _): .reconnecting(attempt: attempt, delay: .zero)
        case .failed(let error): .failed(error)
        }
    }

    struct Settings: Sendable {
        var codec: SocketCodec
        /// How long the server may take to answer `connection_init`.
        var ackTimeout: Duration
        /// How long a connection may be idle before the client pings (graphql-transport-ws).
        var pingInterval: Duration
        /// How long the server may stay silent (after a ping, or between `ka`s) before the connection is dropped.
        var keepAliveTimeout: Duration
        var reconnect: GQLServer.Reconnect
        /// Whether a provider can give a fresh authorization: a refusal (4401, 4403, `connection_error`, an upgrade
        /// refused with 401, AppSync's `UnauthorizedException`) then gets one retry.
        var retriesRefusedAuthorization = false
        /// The longest reading stays paused for a lagging caller while other operations share the socket: their
        /// results (a query's answer, another subscription's event) are behind the paused reads, and a caller may
        /// wait on one of them before it drains the lagging one (two subscriptions zipped, a mutation awaited
        /// inside a subscription's loop). After it, reading resumes and the lagging operation's results may queue
        /// up to ``SocketResults/hardLimit``. A socket with one operation stays paused until its caller catches up.
        var maximumSharedPause: Duration = .seconds(2)
    }

    enum Phase: Equatable, Sendable {
        /// No socket, none wanted.
        case idle
        /// The driver is opening a socket and sending `connection_init`; `attempt` 0 is a first connection,
        /// 1 and up are retries. `connection_ack` is due by `deadline`.
        case opening(attempt: Int, deadline: Instant)
        /// The socket is open; `connection_ack` is due by `deadline`.
        case awaitingAck(attempt: Int, deadline: Instant)
        /// Acknowledged at `since` by attempt `attempt`.
        case ready(attempt: Int, since: Instant)
        /// The connection was lost; attempt `attempt` starts at `until`.
        case waiting(attempt: Int, until: Instant)
        case failed(GQLError)
    }

    /// How an operation ended.
    enum Ending: Equatable, Sendable {
        /// The server completed it, or the client stopped it.
        case completed
        /// The server refused it with GraphQL errors (wire objects).
        case rejected([GQLValue])
        /// The connection failed under it.
        case failed(GQLError)
    }

    enum Action: Equatable, Sendable {
        /// Open socket `generation`, send `connection_init`, then report ``socketOpened(_:at:)``.
        case open(generation: Int)
        case send(GQLValue)
        /// Send a pong; one not yet written is replaced by this one (the latest ping is the one answered).
        case pong(GQLValue)
        /// Close the current socket politely (the machine already moved on if it was dropped).
        case close(code: UInt16, reason: String)
        /// One result payload for an operation.
        case deliver(id: String, GQLValue)
        /// The server acknowledged subscription `id` on the current socket (AppSync's `start_ack`).
        case startAcknowledged(id: String)
        case finish(id: String, Ending)
        case state(GQLServer.ConnectionState)
        /// Resume the callers of `connect()`: `nil` on success.
        case resumeConnects(GQLError?)
        /// A deadline may have moved earlier: recompute the timer.
        case reschedule
        /// Stop or resume reading from the current socket (the caller lags behind the results, or caught up).
        case reading(paused: Bool)
    }
}
