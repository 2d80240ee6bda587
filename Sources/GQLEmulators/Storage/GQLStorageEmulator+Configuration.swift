import Foundation

extension GQLStorageEmulator {
    /// Where the S3 emulator listens, which credentials it accepts and where it keeps the objects.
    ///
    /// ```swift
    /// var configuration = GQLStorageEmulator.Configuration()
    /// configuration.port = 0                                  // any free port
    /// configuration.dataFolder = try GQLDataFolder(path: ".gql-local/storage")
    /// configuration.buckets = ["photos"]                      // created at start when missing
    /// ```
    public struct Configuration: Sendable {
        /// The address to bind; meant for loopback. Default `127.0.0.1`.
        public var host = "127.0.0.1"
        /// The port; 0 picks a free one. Default 4001.
        public var port = 4001
        /// The access key id requests must be signed with. Default ``GQLEmulatorCredentials/storageAccessKey``.
        public var accessKey = GQLEmulatorCredentials().storageAccessKey
        /// The secret access key requests must be signed with. Default ``GQLEmulatorCredentials/storageSecretKey``.
        public var secretKey = GQLEmulatorCredentials().storageSecretKey
        /// The region signatures must name (the AWS SDKs' default, `us-east-1`, unless set).
        public var region = "us-east-1"
        /// Where buckets and objects are kept; `nil`: a fresh temporary folder, gone with the process's temp files.
        public var dataFolder: GQLDataFolder?
        /// Buckets created at start when they do not exist.
        public var buckets: [String] = []
        /// The largest object a single PUT (or one part) may carry; S3's is 5 GiB. Default 5 GiB.
        public var maxObjectBytes: Int64 = 5 << 30
        /// The smallest a part of a multipart upload may be, but the last; S3's is 5 MiB. Default 5 MiB.
        public var minimumPartSize: Int64 = 5 << 20
        /// The fewest bytes a second an upload's body must average over each ``GQLEmulatorLimits/bodyTimeout``;
        /// a slower one is refused with `RequestTimeout` (as a stalled one is). Default 1 KiB a second.
        public var minimumBodyRate: Int64 = 1024
        /// The timeouts and header limits of every connection.
        public var limits = GQLEmulatorLimits()
        /// The time signatures and presigned URLs are checked at and objects are stamped with. Default: the
        /// system clock.
        public var clock: @Sendable () -> Date = Date.init
        /// Called by a CompleteMultipartUpload with the upload's id once its parts list is accepted, before the
        /// parts are joined; for tests that send requests while a completion runs.
        package var whileCompleting: (@Sendable (_ uploadId: String) async -> Void)?
        /// Called with an upload's id when a request of it (UploadPart, AbortMultipartUpload, another completion)
        /// starts waiting for the completion running; for tests.
        package var whenWaitingForCompletion: (@Sendable (_ uploadId: String) -> Void)?

        public init() {}
    }
}
