import Foundation
import GQLCore
import GQLDevServer
import Logging
import ServiceLifecycle

/// The GraphQL dev server with any subset of the service emulators, in one process, their state in one
/// ``GQLDataFolder``: what `gql-cli serve --all` runs.
///
/// ```swift
/// var configuration = GQLEmulatorSuite.Configuration()
/// configuration.dataFolder = try GQLDataFolder(path: ".gql-local")
/// configuration.storage = GQLStorageEmulator.Configuration()          // nil: no storage emulator
/// let suite = try GQLEmulatorSuite(configuration: configuration)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await suite.run() }
///     let endpoints = try await suite.endpoints()                      // every URL and credential
///     …
///     await suite.shutdown()
/// }
/// ```
///
/// Each part listens on a port of its own. The emulators keep their state in the data folder's `storage`,
/// `auth` and `push` subfolders, and the GraphQL API its models in `graphql.sqlite` there unless its
/// configuration names another database.
public final class GQLEmulatorSuite: Service, Sendable {
    /// Which parts run, and how.
    public struct Configuration: Sendable {
        /// The folder every part keeps its state in; `nil`: a fresh temporary folder.
        public var dataFolder: GQLDataFolder?
        /// The GraphQL API; `nil`: none.
        public var graphQL: GQLDevServer.Configuration? = GQLDevServer.Configuration()
        /// The S3 emulator; `nil`: none. Its `dataFolder`, when `nil`, becomes the suite's `storage` subfolder.
        public var storage: GQLStorageEmulator.Configuration?
        /// The Auth0 emulator; `nil`: none. Its `dataFolder`, when `nil`, becomes the suite's `auth` subfolder; the
        /// GraphQL API's `openIDConnect`, when `nil`, is pointed at it (see ``GQLEmulatorSuite/init(configuration:logger:)``).
        public var auth: GQLAuthEmulator.Configuration?
        /// The OneSignal emulator; `nil`: none. Its `dataFolder`, when `nil`, becomes the suite's `push` subfolder.
        public var push: GQLPushEmulator.Configuration?

        public init() {}
    }

    /// Every endpoint and credential of a running suite; its JSON (``json()``) is what
    /// `gql-cli serve --endpoints-file` writes, with the keys `graphql`, `storage`, `auth`, `push`,
    /// `storageAccessKey`, `storageSecretKey`, `authClientId`, `authClientSecret`, `pushAppId`, `pushRestKey`
    /// (a part that does not run is left out).
    public struct Endpoints: Sendable, Equatable, Codable {
        /// `http://127.0.0.1:PORT/graphql`.
        public var graphql: String?
        /// The S3 emulator's base URL, `http://127.0.0.1:PORT`.
        public var storage: String?
        /// The Auth0 emulator's base URL (its issuer is this with a trailing `/`).
        public var auth: String?
        /// The OneSignal emulator's base URL.
        public var push: String?
        public var storageAccessKey: String?
        public var storageSecretKey: String?
        public var authClientId: String?
        public var authClientSecret: String?
        public var pushAppId: String?
        public var pushRestKey: String?

        public init() {}

        /// One JSON object, keys sorted, parts that do not run left out.
        public func json() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            do {
                return try encoder.encode(self)
            } catch {
                throw GQLError(.encoding, "The endpoints could not be written as JSON: \(error)")
            }
        }
    }

    /// The configuration the suite was made with.
    public let configuration: Configuration
    /// The folder every part keeps its state in.
    public let dataFolder: GQLDataFolder
    /// The GraphQL API, when it runs.
    public let graphQL: GQLDevServer?
    /// The S3 emulator, when it runs.
    public let storage: GQLStorageEmulator?
    /// The Auth0 emulator, when it runs.
    public let auth: GQLAuthEmulator?
    /// The OneSignal emulator, when it runs.
    public let push: GQLPushEmulator?

    /// Makes every part; nothing listens until ``run()``.
    ///
    /// - Throws: what the parts' initializers throw (a schema that does not parse, empty credentials, a data
    ///   folder that cannot be made).
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
        self.configuration = configuration
        let folder = try configuration.dataFolder ?? GQLDataFolder.temporary(prefix: "gql-local")
        dataFolder = folder
        if var storageConfiguration = configuration.storage {
            if storageConfiguration.dataFolder == nil {
                storageConfiguration.dataFolder = try folder.subfolder("storage")
            }
            storage = try GQLStorageEmulator(configuration: storageConfiguration, logger: logger)
        } else {
            storage = nil
        }
        if var authConfiguration = configuration.auth {
            if authConfiguration.dataFolder == nil { authConfiguration.dataFolder = try folder.subfolder("auth") }
            auth = try GQLAuthEmulator(configuration: authConfiguration, logger: logger)
        } else {
            auth = nil
        }
        if var pushConfiguration = configuration.push {
            if pushConfiguration.dataFolder == nil { pushConfiguration.dataFolder = try folder.subfolder("push") }
            push = try GQLPushEmulator(configuration: pushConfiguration, logger: logger)
        } else {
            push = nil
        }
        if var graphQLConfiguration = configuration.graphQL {
            if graphQLConfiguration.databasePath == nil {
                graphQLConfiguration.databasePath = try folder.resolve("graphql.sqlite").path
            }
            if graphQLConfiguration.openIDConnect == nil, let auth {
                graphQLConfiguration.openIDConnect = Self.openIDConnect(auth)
            }
            graphQL = try GQLDevServer(configuration: graphQLConfiguration, logger: logger)
        } else {
            graphQL = nil
        }
    }

    /// The GraphQL API's OpenID Connect settings for the Auth0 emulator: its JWKS; the audience of the users'
    /// access tokens, the configured `defaultAudience` (else the tenant's `/userinfo`, the `aud` of access tokens
    /// without an API), so ID tokens and Management API tokens are refused; and the issuer. The issuer and the
    /// `/userinfo` audience are known before the emulator listens only with a configured domain or a fixed port;
    /// with port 0 and no domain they are not checked — the signature is, and only the emulator holds the key.
    static func openIDConnect(_ auth: GQLAuthEmulator) -> GQLDevServer.OpenIDConnect {
        let known = auth.configuration.domain != nil || auth.configuration.port != 0
        let audience = auth.configuration.defaultAudience ?? (known ? auth.issuer + "userinfo" : nil)
        return GQLDevServer.OpenIDConnect(keys: .jwks(auth.jwks), issuer: known ? auth.issuer : nil, audience: audience)
    }

    /// The parts that run, as services.
    private var services: [any Service] {
        var services: [any Service] = []
        if let graphQL { services.append(graphQL) }
        if let storage { services.append(storage) }
        if let auth { services.append(auth) }
        if let push { services.append(push) }
        return services
    }

    /// Serves every part until ``shutdown()`` or a graceful shutdown of the enclosing service group; when one
    /// part fails, the others are shut down and its error is thrown.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for service in services {
                group.addTask { try await service.run() }
            }
            do {
                try await withGracefulShutdownHandler {
                    try await group.waitForAll()
                } onGracefulShutdown: {
                    Task { await self.shutdown() }
                }
            } catch {
                await shutdown()
                throw error
            }
        }
    }

    /// Serves until SIGINT or SIGTERM (or ``shutdown()``), then shuts every part down gracefully.
    public func runUntilTerminated() async throws {
        let group = ServiceGroup(
            services: [self], gracefulShutdownSignals: [.sigint, .sigterm],
            logger: Logger(label: "GraphQLite.GQLEmulatorSuite"))
        try await group.run()
    }

    /// Waits until every part listens and returns their endpoints and credentials.
    ///
    /// - Throws: ``GQLError`` when a part stopped or failed before listening; `CancellationError` when the
    ///   waiting task is cancelled.
    public func endpoints() async throws -> Endpoints {
        var endpoints = Endpoints()
        if let graphQL { endpoints.graphql = try await graphQL.endpoints().http }
        if let storage {
            endpoints.storage = try await storage.endpoint()
            endpoints.storageAccessKey = storage.configuration.accessKey
            endpoints.storageSecretKey = storage.configuration.secretKey
        }
        if let auth {
            endpoints.auth = try await auth.endpoint()
            endpoints.authClientId = auth.configuration.clientId
            endpoints.authClientSecret = auth.configuration.clientSecret
        }
        if let push {
            endpoints.push = try await push.endpoint()
            endpoints.pushAppId = push.configuration.appId
            endpoints.pushRestKey = push.configuration.restKey
        }
        return endpoints
    }

    /// Shuts every part down gracefully and waits until they have stopped.
    public func shutdown() async {
        await withTaskGroup(of: Void.self) { group in
            if let graphQL { group.addTask { await graphQL.shutdown() } }
            if let storage { group.addTask { await storage.shutdown() } }
            if let auth { group.addTask { await auth.shutdown() } }
            if let push { group.addTask { await push.shutdown() } }
        }
    }
}
