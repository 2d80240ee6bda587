import Foundation
import GQLCore
import GQLDevServer
import Hummingbird
import Logging

/// A local emulator of Amazon S3 on 127.0.0.1: buckets and objects kept in a ``GQLDataFolder``, requests checked
/// with AWS Signature Version 4 as S3 checks them, answers in S3's XML shapes, so the AWS SDKs, the AWS CLI and
/// ``GQLStorage`` work against it unchanged.
///
/// ```swift
/// var configuration = GQLStorageEmulator.Configuration()
/// configuration.port = 0
/// configuration.buckets = ["photos"]
/// let started = try await GQLStorageEmulator(configuration: configuration).start()
/// let storage = GQLStorage(endpoint: started.url, accessKey: configuration.accessKey,
///                          secretKey: configuration.secretKey)
/// ```
///
/// Both addressings work: path style (`http://127.0.0.1:PORT/bucket/key`) and virtual-hosted
/// (`http://bucket.localhost:PORT/key`).
public final class GQLStorageEmulator: GQLEmulator {
    /// The configuration the emulator was made with.
    public let configuration: Configuration
    /// The folder buckets and objects are kept in.
    public let dataFolder: GQLDataFolder
    let server: EmulatorServer
    /// Held from `init` until ``shutdown()``: one storage emulator per data folder.
    private let folderLock: GQLDataFolder.Lock

    /// Makes an emulator; nothing listens until ``run()`` (or ``GQLEmulator/start()``).
    ///
    /// - Throws: ``GQLError`` `.invalidArgument` for empty credentials or a bucket name S3 would refuse, `.io`
    ///   for a data folder that cannot be made or read, or that another storage emulator has open (in this process
    ///   or another, until its ``shutdown()`` or its end): each would remove the other's uploads in flight.
    public init(configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
        guard !configuration.accessKey.isEmpty, !configuration.secretKey.isEmpty else {
            throw GQLError(.invalidArgument, "The storage emulator's access key and secret key must not be empty.")
        }
        self.configuration = configuration
        let folder = try configuration.dataFolder ?? GQLDataFolder.temporary(prefix: "gql-storage")
        self.dataFolder = folder
        // Before the store reads the folder and removes what a killed upload left there.
        folderLock = try folder.lockExclusively(for: "storage emulator")
        let logger = logger ?? DebugGatedLogHandler.logger("GraphQLite.GQLStorageEmulator")
        let service = try StorageService(configuration: configuration, folder: folder, logger: logger)
        server = EmulatorServer(
            name: "GQLStorageEmulator", host: configuration.host, port: configuration.port,
            limits: configuration.limits, logger: logger, refusalBody: S3Error.refusalBody
        ) { request, _ in
            await service.respond(request)
        }
    }

    public func run() async throws { try await server.run() }

    public func endpoint() async throws -> String { try await server.baseURL() }

    /// Stops the server, waits for the requests in flight, and lets the data folder go.
    public func shutdown() async {
        await server.shutdown()
        folderLock.release()
    }
}
