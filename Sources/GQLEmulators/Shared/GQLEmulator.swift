import ServiceLifecycle

/// One local emulator of a service GQLServices talks to (``GQLStorageEmulator`` for S3, and Auth0's and
/// OneSignal's), on 127.0.0.1, its state in a ``GQLDataFolder``.
///
/// An emulator is a swift-service-lifecycle `Service`, like `GQLDevServer`: ``run()`` serves until ``shutdown()``
/// or the group's graceful shutdown. In tests, ``start()`` runs it in a task and returns once it listens:
///
/// ```swift
/// var configuration = GQLStorageEmulator.Configuration()
/// configuration.port = 0                                   // any free port
/// let started = try await GQLStorageEmulator(configuration: configuration).start()
/// defer { Task { await started.shutdown() } }
/// print(started.url)                                       // http://127.0.0.1:PORT
/// ```
public protocol GQLEmulator: Service, Sendable {
    /// Serves until ``shutdown()`` or a graceful shutdown of the enclosing service group.
    func run() async throws
    /// Waits until the emulator listens and returns its base URL, `http://127.0.0.1:PORT`.
    func endpoint() async throws -> String
    /// Stops accepting, finishes the requests in flight and waits until ``run()`` returns.
    func shutdown() async
}

extension GQLEmulator {
    /// Runs the emulator in a task of its own and returns once it listens.
    ///
    /// ```swift
    /// let started = try await emulator.start()
    /// …
    /// await started.shutdown()
    /// ```
    ///
    /// - Throws: what ``run()`` throws before it listens (a port in use, an unreadable data folder), or
    ///   `CancellationError`.
    public func start() async throws -> GQLStartedEmulator {
        let running = Task { try await self.run() }
        do {
            let url = try await endpoint()
            return GQLStartedEmulator(url: url) {
                await self.shutdown()
                _ = await running.result
            }
        } catch {
            await shutdown()
            if case .failure(let failure) = await running.result { throw failure }
            throw error
        }
    }
}
