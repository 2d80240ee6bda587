import Foundation

extension GQLDevServer {
    /// How the server listens, authenticates and misbehaves on purpose.
    public struct Configuration: Sendable {
        /// The address to bind. Only loopback addresses are meant for it. Default `127.0.0.1`.
        public var host = "127.0.0.1"
        /// The port; 0 picks a free one (see ``GQLDevServer/endpoints()``). Default 4000.
        public var port = 4000
        /// The path of the GraphQL endpoint, for HTTP and WebSocket alike. Default `/graphql`.
        public var path = "/graphql"
        /// SDL with `type X @model { … }` declarations; `nil` serves the default `Objects` model.
        public var schema: String?
        /// The SQLite file to store models in; `nil` keeps them in memory. Ignored when a database is passed
        /// to the initializer.
        public var databasePath: String?
        /// Requests must carry this API key: `x-api-key` on HTTP, in the AppSync `header`, or in
        /// `connection_init`'s payload. `nil`: not required.
        public var apiKey: String?
        /// Requests must carry this admin secret (`x-hasura-admin-secret`). `nil`: not required.
        public var adminSecret: String?
        /// Requests must carry a JWT these settings accept (AppSync's `OPENID_CONNECT` mode), checked at ``clock``;
        /// with ``apiKey`` or ``adminSecret`` set too, any one good credential is enough. `nil`: not required.
        public var openIDConnect: OpenIDConnect?
        /// The web origins (`https://app.example.com`, or `*` for any) whose pages may use the server: their
        /// requests and CORS preflights are answered with `Access-Control-Allow-Origin`; a request from any other
        /// origin gets 403. Default: none, so no web page can use the server. Clients that are not browsers send
        /// no `Origin` and are not affected.
        public var allowedOrigins: [String] = []
        /// The largest request body accepted; larger ones get HTTP 413. Default 1 MiB.
        public var maxBodyBytes = 1 << 20
        /// How many answers to mutations sent with an `Idempotency-Key` header are kept, the oldest forgotten first
        /// (and at most 16 MiB of them): a repeat of such a request — a client retrying after a lost answer or a
        /// crash, as GQLSync does — gets the first run's answer instead of running again; a repeat while the first
        /// is still running gets 409, the key with another request 422. Per credentials; queries are not recorded.
        /// 0 turns it off. Default 10,000.
        public var idempotentAnswers = 10_000
        /// How often keep-alive messages go out on `graphql-ws` and AppSync sockets. Default 10 s.
        public var keepAliveInterval: Duration = .seconds(10)
        /// How long a `graphql-transport-ws` client may wait before `connection_init` (else 4408). Default 3 s.
        public var connectionInitTimeout: Duration = .seconds(3)
        /// The `connectionTimeoutMs` announced in AppSync's `connection_ack`. Default 300000.
        public var appSyncConnectionTimeoutMilliseconds = 300_000
        /// What one request may ask, and how long a connection may take: see ``Limits``.
        public var limits = Limits()
        /// The time the server stamps on what it writes (`createdAt`, `updatedAt`, `_lastChangedAt`) and reports
        /// (`startedAt` of sync queries), and at which tokens are checked. Default: the system clock; tests of delta
        /// sync and token expiry inject their own.
        public var clock: @Sendable () -> Date = Date.init
        /// Faults injected to test clients.
        public var faults = Faults()
        /// Tests only: awaited before each WebSocket subscription is registered, with its operation name. The
        /// socket's next message waits with it, so a test can hold a subscription unregistered for as long as it
        /// needs (GQLSync's live sync tests). Default `nil`.
        package var beforeSubscriptionStarts: (@Sendable (_ operationName: String?) async -> Void)?
        /// The event loops the server runs on. `nil` (the default): NIO's shared loops
        /// (`MultiThreadedEventLoopGroup.singleton`, one thread per core), which every other NIO user in the process
        /// (HTTP clients, WebSockets, other servers) shares. A number: loops of the server's own with that many
        /// threads, started by ``GQLDevServer/run()`` and shut down when it returns, so that no other work in the
        /// process delays the server's timers and answers — several servers in one test process, say. At least 1.
        public var eventLoopThreads: Int?

        public init() {}
    }

    /// Faults injected on purpose, to test how clients cope.
    public struct Faults: Sendable, Equatable {
        /// Delay before answering each HTTP request and each WebSocket message, in milliseconds. Default 0.
        public var latencyMilliseconds = 0
        /// The share of POSTs answered with HTTP 500, from 0 to 1. Default 0.
        public var failRate = 0.0
        /// Seed of the random choice of failing POSTs, so a run can be repeated. Default 1.
        public var seed: UInt64 = 1
        /// Close each WebSocket (1011) after the server sent this many messages on it; `nil`: never.
        public var dropWebSocketsAfter: Int?

        public init() {}
    }
}
