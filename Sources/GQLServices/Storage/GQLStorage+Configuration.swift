import AsyncHTTPClient
import Foundation
import GQLCore

extension GQLStorage {
    /// How a ``GQLStorage`` talks to S3: timeouts, multipart sizes, parallelism, retries, payload signing.
    ///
    /// ```swift
    /// var configuration = GQLStorage.Configuration()
    /// configuration.partSize = 16 << 20
    /// configuration.maximumConcurrentParts = 8
    /// let storage = GQLStorage(AmazonS3: "us-east-2", accessKey: key, secretKey: secret, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The longest a request may take, its answer's head and whole body included; for downloads, whose length
        /// has no bound, the longest the head may take and the body may stall (a transfer that keeps moving is
        /// never cut). Default 60 s.
        public var timeout: Duration = .seconds(60)
        /// Files at least this large are uploaded in parts. Default 16 MiB.
        public var multipartThreshold = 16 << 20
        /// The size of each part of a multipart upload, at least 5 MiB (S3's minimum). Default 8 MiB.
        public var partSize = 8 << 20
        /// How many parts are uploaded at once; memory use is about this many parts. Default 4.
        public var maximumConcurrentParts = 4
        /// How many times a request is tried before its error is thrown (5xx, `SlowDown`, timeouts and lost
        /// connections are retried; other errors are not). Default 4.
        public var maximumAttempts = 4
        /// The delays between attempts. Default: from 200 ms, doubling, at most 5 s, jittered.
        public var backoff = GQLBackoff(initialDelay: .milliseconds(200), maximumDelay: .seconds(5))
        /// The largest object ``GQLStorage/download(_:_:)`` holds in memory; larger ones need
        /// ``GQLStorage/download(_:_:to:progress:)``. Default 256 MiB.
        public var maximumInMemoryDownload = 256 << 20
        /// The largest XML answer read: a listing page, the start or the completion of a multipart upload. Default
        /// 8 MiB. A page of 1,000 keys of 1,024 bytes is about 1.5 MB, and at most about 3.5 MB when every byte of
        /// every key is percent-encoded (`encoding-type=url`): over twice the largest real page. A larger answer
        /// stops with `.responseTooLarge` as soon as its bytes pass the limit.
        public var maximumXMLResponseSize = 8 << 20
        /// The most pages one ``GQLStorage/list(_:prefix:pageSize:)`` loop fetches before it stops with
        /// `.invalidResponse`, so a store that never ends its listing cannot page for ever. Default 10,000 (ten million
        /// objects at 1,000 keys a page).
        public var maximumListingPages = 10_000
        /// Whether bodies are hashed into the signature (`true`, the default) or sent as `UNSIGNED-PAYLOAD`,
        /// which spares reading a file twice; TLS still protects the body in transit.
        public var signsPayload = true
        /// Whether uploads carry a CRC-32 of their body (`x-amz-checksum-crc32`, with
        /// `x-amz-sdk-checksum-algorithm: CRC32`, as the AWS SDKs send by default), which S3 checks before it
        /// stores the body; a multipart upload declares the algorithm when it starts, names each part's CRC when it
        /// completes, and the object's composite checksum S3 answers is compared with the one computed here.
        /// `false` leaves the headers out, for S3-compatible stores that refuse them. Default `true`.
        public var sendsChecksums = true
        /// An AsyncHTTPClient of the app whose event loops and settings (TLS, proxy, pool) the storage uses:
        /// requests go through a client of the storage's own made from it with redirects off, shut down with the
        /// storage (the app's client is left to the app). `nil`, the default, uses the shared event loops.
        public var httpClient: HTTPClient?
        /// The time signatures are made at; replaced by tests. Default: the system clock.
        public var now: @Sendable () -> Date = { Date() }

        public init() {}
    }
}
