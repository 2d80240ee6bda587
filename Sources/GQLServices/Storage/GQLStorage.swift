import AsyncHTTPClient
import Foundation
import GQLCore
import GQLCrypto
import GQLHTTP

/// An Amazon S3 client: objects uploaded, downloaded, listed, deleted and presigned, with multipart uploads and
/// streamed downloads for large files. Works with AWS and with every S3-compatible store (MinIO, R2, moto …).
///
/// ```swift
/// let storage = GQLStorage(AmazonS3: "us-east-2", accessKey: "AKIA…", secretKey: "…")
/// try await storage.upload("bucket", "folder/file name+(1).png", data)
/// let same = try await storage.download("bucket", "folder/file name+(1).png")
/// for try await object in storage.list("bucket", prefix: "folder/") { print(object.key, object.size) }
/// try await storage.shutdown()
/// ```
///
/// Requests are signed with AWS Signature Version 4; any key works (spaces, `+`, `!`, `'`, `(`, `)`, `*`,
/// unicode, `%`). Failures throw ``GQLError`` with S3's own error code in ``GQLError/serviceCode`` and its request
/// id in ``GQLError/requestId``: `.notFound` (no such key or bucket), `.accessDenied`, `.signature` (a wrong
/// secret), `.service` (any other refusal), `.redirect` (a redirect, never followed: it would carry the signature,
/// the session token and the body elsewhere), and the transport codes `.timeout`, `.connection`, `.cancelled`.
/// Credentials never appear in logs, errors or descriptions.
public final class GQLStorage: Sendable {
    /// The region requests are signed for.
    public let region: String
    /// The settings the storage was made with.
    public let configuration: Configuration
    let endpoint: Result<Endpoint, GQLError>
    let signer: SigV4Signer
    let exchange: HTTPExchange

    /// Amazon S3 in `region`, with virtual-hosted addressing (`https://bucket.s3.region.amazonaws.com/key`).
    ///
    /// ```swift
    /// let storage = GQLStorage(AmazonS3: "us-east-2", accessKey: "AKIA…", secretKey: "…")
    /// ```
    public convenience init(
        AmazonS3 region: String, accessKey: String, secretKey: String, sessionToken: String? = nil,
        configuration: Configuration = .init()
    ) {
        self.init(
            endpoint: "https://s3.\(region).amazonaws.com", region: region, accessKey: accessKey,
            secretKey: secretKey, sessionToken: sessionToken, pathStyle: false, configuration: configuration)
    }

    /// An S3-compatible store at `endpoint` (MinIO, Cloudflare R2, moto …).
    ///
    /// ```swift
    /// let storage = GQLStorage(endpoint: "http://127.0.0.1:9000", region: "us-east-1",
    ///                          accessKey: "minio", secretKey: "minio123", sessionToken: nil, pathStyle: true)
    /// ```
    /// - Parameter pathStyle: `true` addresses objects as `endpoint/bucket/key` (what local stores expect);
    ///   `false` as `bucket.host/key`. Buckets whose names are not valid host labels always use the path.
    ///   An unusable endpoint is reported by the first request.
    public init(
        endpoint: String, region: String = "us-east-1", accessKey: String, secretKey: String,
        sessionToken: String? = nil, pathStyle: Bool = true, configuration: Configuration = .init()
    ) {
        self.region = region
        self.configuration = configuration
        self.endpoint = Endpoint.parse(endpoint, pathStyle: pathStyle)
        self.signer = SigV4Signer(
            credentials: .init(accessKey: accessKey, secretKey: secretKey, sessionToken: sessionToken),
            region: region)
        var limits = HTTPExchange.Limits()
        limits.timeout = configuration.timeout
        limits.maximumResponseSize = max(configuration.maximumInMemoryDownload, 1 << 20)
        let client = HTTPExchange.makeClient(
            timeout: configuration.timeout, connectTimeout: .seconds(10), sharing: configuration.httpClient)
        self.exchange = HTTPExchange(client: client, limits: limits)
    }

    /// Releases the storage's connections; requests made afterwards fail. A shared ``Configuration/httpClient``
    /// is left to its owner. Calling it again does nothing; a storage dropped without it releases them when it goes.
    public func shutdown() async throws { try await exchange.owner.shutdown() }
}

extension GQLStorage: CustomStringConvertible {
    /// The endpoint and region; never the credentials.
    public var description: String {
        switch endpoint {
        case .success(let endpoint): "GQLStorage(\(endpoint.origin), region: \(region))"
        case .failure: "GQLStorage(<unusable endpoint>, region: \(region))"
        }
    }
}

extension GQLError.Code {
    /// A service refused the credentials or the permission (S3 `AccessDenied`, HTTP 403).
    public static let accessDenied = GQLError.Code("accessDenied")
    /// A request's signature did not match (S3 `SignatureDoesNotMatch`): usually a wrong secret key.
    public static let signature = GQLError.Code("signature")
    /// A web service refused a request for a reason of its own; ``GQLError/serviceCode`` names it.
    public static let service = GQLError.Code("service")
}
