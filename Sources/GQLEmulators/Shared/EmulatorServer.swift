import GQLCore
import GQLDevServer
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The HTTP server under every emulator: Hummingbird on guarded connections (``GuardedEmulatorChannel``), one
/// responder for every request, and the dev server's ``GQLDevServer/Lifecycle`` for the port, the shutdown and
/// their cancellable waits.
package final class EmulatorServer: Sendable {
    /// Answers one request; it never throws (every failure is an answer of the emulated service's shape).
    package typealias Respond = @Sendable (Request, BasicRequestContext) async -> Response

    package let name: String
    package let host: String
    let requestedPort: Int
    let limits: GQLEmulatorLimits
    let logger: Logger
    let refusalBody: ConnectionGuard.RefusalBody
    let respond: Respond
    let lifecycle = GQLDevServer.Lifecycle()

    /// - Parameters:
    ///   - name: the service's name in logs and the `Server` header (`GQLStorageEmulator`).
    ///   - refusalBody: the body of what the connection guard answers itself (408, 400, 431).
    package init(
        name: String, host: String, port: Int, limits: GQLEmulatorLimits, logger: Logger?,
        refusalBody: @escaping ConnectionGuard.RefusalBody, respond: @escaping Respond
    ) {
        self.name = name
        self.host = host
        self.requestedPort = port
        self.limits = limits
        self.logger = logger ?? DebugGatedLogHandler.logger("GraphQLite.\(name)")
        self.refusalBody = refusalBody
        self.respond = respond
    }

    /// Serves until ``shutdown()`` or a graceful shutdown of the enclosing service group.
    package func run() async throws {
        let (limits, refusalBody, lifecycle) = (limits, refusalBody, lifecycle)
        let server = HTTPServerBuilder { responder in
            GuardedEmulatorChannel(responder: responder, limits: limits, refusalBody: refusalBody)
        }
        let application = Application(
            responder: CallbackResponder(callback: respond),
            server: server,
            configuration: .init(address: .hostname(host, port: requestedPort), serverName: name),
            onServerRunning: { channel in lifecycle.listening(on: channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .singleton,
            logger: logger)
        let group = ServiceGroup(services: [application], logger: logger)
        guard lifecycle.starting(group) else { return }
        do {
            try await withGracefulShutdownHandler {
                try await group.run()
            } onGracefulShutdown: {
                Task { await group.triggerGracefulShutdown() }
            }
            lifecycle.stopped(nil)
        } catch {
            lifecycle.stopped(error)
            throw error
        }
    }

    /// The port once listening (the real one when 0 was asked for).
    package func port() async throws -> Int { try await lifecycle.port() }

    /// `http://HOST:PORT` once listening.
    package func baseURL() async throws -> String {
        let port = try await port()
        let host = host.contains(":") ? "[\(host)]" : host
        return "http://\(host):\(port)"
    }

    /// Stops accepting, finishes the requests in flight, and waits until ``run()`` returns.
    package func shutdown() async { await lifecycle.shutdown() }
}
