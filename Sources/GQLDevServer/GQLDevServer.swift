import GQLCore
import GQLStore
import Logging
import NIOPosix
import ServiceLifecycle

/// An embedded GraphQL server over a local SQLite file, following AWS AppSync's `@model` conventions, for
/// development and tests: queries, mutations and subscriptions over HTTP and WebSocket, on 127.0.0.1.
///
/// ```swift
/// var configuration = GQLDevServer.Configuration()
/// configuration.port = 0                       // any free port
/// let server = try GQLDevServer(configuration: configuration)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await server.run() }
///     let endpoints = try await server.endpoints()   // http://127.0.0.1:PORT/graphql, ws://…
///     …
///     await server.shutdown()
/// }
/// ```
///
/// It is a `Service` (swift-service-lifecycle): `run()` serves until ``shutdown()`` or the service group's
/// graceful shutdown, then closes WebSockets with 1001 and finishes requests in flight. A command-line
/// program uses ``runUntilTerminated()`` to do the same on SIGINT and SIGTERM.
///
/// One path serves everything: HTTP POST and GET, and WebSockets speaking `graphql-transport-ws`, legacy
/// `graphql-ws`, or AppSync's real-time protocol (told apart by the `header` query parameter or a
/// `header-…` subprotocol entry).
public final class GQLDevServer: Service, Sendable {
    /// Where the server answers.
    public struct Endpoints: Sendable, Equatable {
        /// `http://HOST:PORT/graphql`
        public var http: String
        /// `ws://HOST:PORT/graphql`
        public var webSocket: String
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    /// The database the models are stored in.
    public let database: GQLDatabase
    let engine: any DevExecutor
    let logger: Logger
    let lifecycle = Lifecycle()
    /// The answers of mutations sent with an `Idempotency-Key` (``Configuration/idempotentAnswers``).
    let idempotency: IdempotencyLedger

    /// Makes a server; nothing listens until ``run()``.
    ///
    /// ```swift
    /// var configuration = GQLDevServer.Configuration()
    /// configuration.apiKey = "da2-local"
    /// let server = try GQLDevServer(configuration: configuration, database: try GQLDatabase(path: "dev.sqlite"))
    /// ```
    ///
    /// - Parameters:
    ///   - database: where the models are stored; `nil` opens ``Configuration/databasePath``, or a
    ///     private in-memory database when that is `nil` too.
    ///   - logger: where the server logs; `nil` logs through swift-log's handler for `GraphQLite.GQLDevServer`
    ///     as far as ``GQLDebug`` allows (silent by default). Credentials never reach a log line.
    /// - Throws: ``GQLError`` for a schema that does not parse, a database that cannot be opened, an empty
    ///   API key or admin secret (which would let any request carrying an empty header in), OpenID Connect keys
    ///   that cannot be used (an empty secret, an unreadable key set), or ``Configuration/eventLoopThreads`` under 1.
    public convenience init(
        configuration: Configuration = Configuration(),
        database: GQLDatabase? = nil,
        logger: Logger? = nil
    ) throws {
        if let threads = configuration.eventLoopThreads, threads < 1 {
            throw GQLError(
                .invalidArgument, "eventLoopThreads is \(threads); a server's own loops need 1 thread or more.")
        }
        for (name, value) in [("API key", configuration.apiKey), ("admin secret", configuration.adminSecret)]
        where value?.isEmpty == true {
            throw GQLError(.invalidArgument, "The \(name) must not be empty; leave it nil to require none.")
        }
        if let openID = configuration.openIDConnect { _ = try DevTokenCheck(openID, clock: configuration.clock) }
        let database = try database ?? GQLDatabase(path: configuration.databasePath ?? ":memory:")
        let engine = try DevEngine(
            sdl: configuration.schema, database: database, limits: configuration.limits, clock: configuration.clock)
        self.init(configuration: configuration, engine: engine, logger: logger)
    }

    /// Makes a server around any engine; tests wrap the real one, e.g. to hold a request in flight.
    package init(configuration: Configuration, engine: any DevExecutor, logger: Logger?) {
        self.configuration = configuration
        self.engine = engine
        self.database = engine.database
        self.logger = logger ?? DebugGatedLogHandler.logger()
        self.idempotency = IdempotencyLedger(capacity: max(0, configuration.idempotentAnswers))
    }

    /// How many requests were answered with the kept answer of an earlier one with the same `Idempotency-Key`.
    package var idempotentReplays: Int { idempotency.replays }

    /// The generated schema as SDL: every model with its queries, mutations, subscriptions and inputs.
    public var printedSchema: String { engine.schemaSDL }

    /// The generated schema for `sdl` (`nil` for the default `Objects` model), without starting a server.
    ///
    /// ```swift
    /// print(try GQLDevServer.generatedSchema())   // what `gql-cli serve --print-schema` prints
    /// ```
    public static func generatedSchema(_ sdl: String? = nil) throws -> String {
        try DevEngine(sdl: sdl, database: GQLDatabase(path: ":memory:")).schemaSDL
    }

    /// Serves until ``shutdown()`` or a graceful shutdown of the enclosing service group.
    ///
    /// - Throws: when the address cannot be bound, or the server fails.
    public func run() async throws {
        let tokens = try configuration.openIDConnect.map { try DevTokenCheck($0, clock: configuration.clock) }
        let authenticator = DevAuthenticator(
            apiKey: configuration.apiKey, adminSecret: configuration.adminSecret, tokens: tokens)
        let faults = FaultInjector(configuration.faults)
        let registry = WebSocketRegistry()
        let http = HTTPTransport(
            engine: engine, authenticator: authenticator, faults: faults,
            maxBodyBytes: configuration.maxBodyBytes, limits: configuration.limits, path: configuration.path,
            idempotency: idempotency, logger: logger)
        let webSocket = WebSocketTransport(
            engine: engine, authenticator: authenticator, faults: faults, configuration: configuration,
            registry: registry, logger: logger)
        let lifecycle = self.lifecycle
        // A positive count (checked by init), or the shared loops.
        let ownLoops = configuration.eventLoopThreads.map { MultiThreadedEventLoopGroup(numberOfThreads: max(1, $0)) }
        let application = DevApplication.make(
            configuration: configuration, http: http, webSocket: webSocket,
            eventLoops: ownLoops.map { .shared($0) } ?? .singleton, logger: logger,
            onListening: { port in lifecycle.listening(on: port) })
        // Shut down in reverse order: the closer first (1001 to every socket), then the application, which
        // stops accepting and finishes the requests in flight.
        let group = ServiceGroup(services: [application, WebSocketCloser(registry: registry)], logger: logger)
        guard lifecycle.starting(group) else {
            try? await ownLoops?.shutdownGracefully()
            return
        }
        let outcome: Result<Void, any Error>
        do {
            try await withGracefulShutdownHandler {
                try await group.run()
            } onGracefulShutdown: {
                Task { await group.triggerGracefulShutdown() }
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // The server's own loops end with it (every channel on them is closed by now).
        try? await ownLoops?.shutdownGracefully()
        switch outcome {
        case .success: lifecycle.stopped(nil)
        case .failure(let error):
            lifecycle.stopped(error)
            throw error
        }
    }

    /// Serves until SIGINT or SIGTERM (or ``shutdown()``), then shuts down gracefully; for command-line programs.
    ///
    /// ```swift
    /// let server = try GQLDevServer(configuration: configuration)
    /// Task { print(try await server.endpoints().http) }
    /// try await server.runUntilTerminated()
    /// ```
    public func runUntilTerminated() async throws {
        let group = ServiceGroup(services: [self], gracefulShutdownSignals: [.sigint, .sigterm], logger: logger)
        try await group.run()
    }

    /// Waits until the server listens and returns its endpoints (with the real port when `port` was 0).
    ///
    /// Call it while ``run()`` runs or is about to: it waits for the server to listen, and before `run()`
    /// starts there is nothing to wait for but that.
    ///
    /// - Throws: ``GQLError`` when the server stopped or failed to start before listening; `CancellationError`
    ///   at once when the waiting task is cancelled (the server is not affected).
    public func endpoints() async throws -> Endpoints {
        let port = try await lifecycle.port()
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let path = configuration.path.hasPrefix("/") ? configuration.path : "/" + configuration.path
        return Endpoints(http: "http://\(host):\(port)\(path)", webSocket: "ws://\(host):\(port)\(path)")
    }

    /// Stops accepting connections, closes WebSockets with 1001 "going away", finishes requests in flight,
    /// and waits until ``run()`` returns. Before `run()`, it makes `run()` return at once. A task cancelled while
    /// it waits stops waiting at once; the shutdown it asked for goes on.
    public func shutdown() async {
        await lifecycle.shutdown()
    }
}
