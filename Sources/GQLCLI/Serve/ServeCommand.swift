import ArgumentParser
import Foundation
import GQLDevServer
import GQLEmulators
import Logging

/// `gql-cli serve`: runs GQLDevServer, an AppSync-style GraphQL server over a local SQLite file, until
/// SIGINT or SIGTERM.
///
/// ```
/// gql-cli serve --db dev.sqlite --api-key da2-local
/// HTTP      http://127.0.0.1:4000/graphql
/// WebSocket ws://127.0.0.1:4000/graphql
/// ```
struct ServeCommand: AsyncParsableCommand, InterruptibleCommand {
    /// The server's graceful shutdown answers SIGINT and SIGTERM (exit 0); InterruptSignals bounds how long it takes.
    static let interruptEnding = InterruptEnding.own

    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a GraphQL API over a local SQLite file, with subscriptions.",
        discussion: """
            Generates an AWS AppSync-style API from the @model types of --schema (default: one model, \
            Objects): get/list/sync queries, create/update/delete mutations and onCreate/onUpdate/onDelete \
            subscriptions. HTTP POST and GET on the endpoint; WebSocket on the same path with \
            graphql-transport-ws, legacy graphql-ws and the AppSync real-time protocol. Once listening it \
            prints the HTTP and WebSocket endpoints, one line each; it stops gracefully on SIGINT or SIGTERM \
            (WebSockets closed with 1001, requests in flight finished).

            With --jwt-secret (HS256) or --jwks (RS256) it checks bearer tokens like AppSync's OPENID_CONNECT \
            mode: an expired, forged or misdirected token gets HTTP 401 or WebSocket close 4401.

            With --all, or any of --storage, --auth and --push, local emulators of the services the toolkit \
            talks to run beside the API, each on a port of its own: an S3-compatible store (SigV4 checked as S3 \
            does), an Auth0-compatible tenant and a OneSignal-compatible push sink. Their state and the API's \
            models are kept in --data DIR. Every endpoint and credential is printed once all listen, and written \
            as one JSON object to --endpoints-file.

            It is a development and test server, meant for 127.0.0.1: no TLS, and the API key, admin \
            secret and tokens travel in the clear.
            """
    )

    @Option(
        help: ArgumentHelp(
            "An SDL file with `type X @model { … }` declarations. Default: the Objects model.", valueName: "file"))
    var schema: String?

    @Option(
        help: ArgumentHelp(
            "The SQLite file to store the models in (created if missing). Default: in memory.", valueName: "file"))
    var db: String?

    @Option(help: ArgumentHelp("The address to listen on; meant for loopback.", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("The port to listen on; 0 picks a free one.", valueName: "port"))
    var port = 4000

    @Option(
        help: ArgumentHelp(
            "Require this API key (x-api-key, AppSync header, or connection_init payload).", valueName: "key"))
    var apiKey: String?

    @Option(help: ArgumentHelp("Require this admin secret (x-hasura-admin-secret).", valueName: "secret"))
    var adminSecret: String?

    @Option(
        name: .customLong("allowed-origin"),
        help: ArgumentHelp(
            "A web origin whose pages may use the server (repeatable; * for any). Default: none.", valueName: "origin"))
    var allowedOrigins: [String] = []

    @Option(
        help: ArgumentHelp(
            "Fault: delay every HTTP request and WebSocket message by this many milliseconds.", valueName: "ms"))
    var latencyMs = 0

    @Option(help: ArgumentHelp("Fault: answer this share of POSTs (0 to 1) with HTTP 500.", valueName: "share"))
    var failRate = 0.0

    @Option(help: ArgumentHelp("Seed of the --fail-rate choice, so a run can be repeated.", valueName: "n"))
    var seed: UInt64 = 1

    @Option(
        help: ArgumentHelp(
            "Fault: close each WebSocket (1011) after the server sent this many messages on it.", valueName: "n"))
    var dropWebsocketsAfter: Int?

    @OptionGroup(title: "OpenID Connect")
    var tokens: ServeTokenOptions

    @OptionGroup(title: "Limits")
    var limits: ServeLimitOptions

    @OptionGroup(title: "Emulators")
    var emulators: ServeEmulatorOptions

    @Flag(help: "Print the generated schema (SDL) and exit.")
    var printSchema = false

    @Flag(help: "Log requests and connections on standard error.")
    var verbose = false

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
        guard (0...1).contains(failRate) else { throw ValidationError("--fail-rate must be from 0 to 1") }
        if let dropWebsocketsAfter, dropWebsocketsAfter < 1 {
            throw ValidationError("--drop-websockets-after must be at least 1")
        }
        if apiKey?.isEmpty == true { throw ValidationError("--api-key must not be empty") }
        if adminSecret?.isEmpty == true { throw ValidationError("--admin-secret must not be empty") }
        if let schema, !FileManager.default.fileExists(atPath: schema) {
            throw ValidationError("no schema file at \(schema)")
        }
    }

    func run() async throws {
        let sdl = try schemaText()
        if printSchema {
            let text = try CLIError.guarding("the schema is not valid") { try GQLDevServer.generatedSchema(sdl) }
            print(text)
            return
        }
        if !Self.loopbackHosts.contains(host) {
            FileHandle.standardError.write(
                Data("Warning: \(host) is not a loopback address; gql-cli serve is meant for 127.0.0.1.\n".utf8))
        }
        if emulators.isSuite {
            try await Self.serve(try suite(schema: sdl, logger: logger()), endpointsFile: emulators.endpointsFile)
            return
        }
        let server = try CLIError.guarding("cannot start the server") {
            var configuration = serverConfiguration(sdl)
            configuration.openIDConnect = try tokens.openIDConnect()
            return try GQLDevServer(configuration: configuration, logger: logger())
        }
        try await Self.serve(server)
    }

    /// The text of the --schema file, or `nil` without one.
    func schemaText() throws -> String? {
        try schema.map { path in
            try CLIError.guarding("cannot read \(path)") { try String(contentsOfFile: path, encoding: .utf8) }
        }
    }

    /// The composition `serve --all` (or any emulator option) runs: the GraphQL API of these options with the
    /// emulators they ask for, not yet listening. `gql-cli demo` starts its services with this too.
    func suite(schema sdl: String?, logger: Logger) throws -> GQLEmulatorSuite {
        try CLIError.guarding("cannot start the emulators") {
            var configuration = serverConfiguration(sdl)
            configuration.openIDConnect = try tokens.openIDConnect()
            return try GQLEmulatorSuite(
                configuration: emulators.suiteConfiguration(graphQL: configuration, host: host), logger: logger)
        }
    }

    static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1"]

    func serverConfiguration(_ sdl: String?) -> GQLDevServer.Configuration {
        var configuration = GQLDevServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.schema = sdl
        configuration.databasePath = db
        configuration.apiKey = apiKey
        configuration.adminSecret = adminSecret
        configuration.faults.latencyMilliseconds = latencyMs
        configuration.faults.failRate = failRate
        configuration.faults.seed = seed
        configuration.faults.dropWebSocketsAfter = dropWebsocketsAfter
        configuration.limits = limits.limits
        configuration.allowedOrigins = allowedOrigins
        return configuration
    }

    func logger() -> Logger {
        var logger = Logger(label: "gql-cli.serve")
        logger.logLevel = verbose ? .info : .warning
        return logger
    }

    /// Runs `server` until SIGINT or SIGTERM (a graceful shutdown) and prints its endpoints once it listens.
    static func serve(_ server: GQLDevServer) async throws {
        try await serving(
            what: "the server", run: { try await server.runUntilTerminated() },
            announce: {
                let endpoints = try await server.endpoints()
                return "HTTP      \(endpoints.http)\nWebSocket \(endpoints.webSocket)\n"
            }, shutdown: { await server.shutdown() })
    }

    /// Runs `run` until it returns (after SIGINT or SIGTERM, or a shutdown from inside); once `announce` has
    /// waited for the listening and made its lines, prints them unbuffered, so a parent process reading a pipe
    /// sees them at once. A failure of either shuts down and is thrown.
    static func serving(
        what: String, run: @escaping @Sendable () async throws -> Void,
        announce: @escaping @Sendable () async throws -> String, shutdown: @Sendable () async -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await run()
                } catch {
                    throw CLIError("\(what) stopped", error)
                }
                return true
            }
            group.addTask {
                let lines: String
                do {
                    lines = try await announce()
                } catch let error as CLIError {
                    throw error
                } catch {
                    throw CLIError("\(what) did not start", error)
                }
                FileHandle.standardOutput.write(Data(lines.utf8))
                return false
            }
            do {
                // true: run() returned, after a signal or a shutdown from inside.
                while let finished = try await group.next() {
                    if finished {
                        group.cancelAll()
                        break
                    }
                }
            } catch {
                await shutdown()
                throw error
            }
        }
    }
}
