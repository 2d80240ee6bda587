import Foundation
import GQLCore
import HTTPTypes
import Hummingbird
import Logging

/// Answers the S3 requests of a ``GQLStorageEmulator``: reads the request, checks its signature, routes it to
/// the operation, and turns every refusal into S3's XML error.
struct StorageService: Sendable {
    let configuration: GQLStorageEmulator.Configuration
    let store: ObjectStore
    let uploads: MultipartStore
    let verifier: SigV4Verifier
    let logger: Logger

    /// The most bytes of an XML request body (a `<Delete>` of 1,000 keys of 1,024 bytes is about 1.1 MB).
    static let maxXMLBytes: Int64 = 2 << 20

    init(configuration: GQLStorageEmulator.Configuration, folder: GQLDataFolder, logger: Logger) throws {
        self.configuration = configuration
        store = try ObjectStore(folder: folder)
        uploads = try MultipartStore(folder: folder, whenWaiting: configuration.whenWaitingForCompletion)
        verifier = SigV4Verifier(
            accessKey: configuration.accessKey, secretKey: configuration.secretKey, region: configuration.region,
            clock: configuration.clock)
        self.logger = logger
        for bucket in configuration.buckets where !store.bucketExists(bucket) {
            do {
                try store.createBucket(bucket, at: configuration.clock())
            } catch {
                throw GQLError(.invalidArgument, "The bucket \(bucket) could not be created: \(error.message)")
            }
        }
    }

    func respond(_ request: Request) async -> Response {
        let requestId = S3Error.newRequestId()
        let isHead = request.method == .head
        var response: Response
        do {
            let s3 = try S3Request(request)
            let payload = try verifier.verify(s3)
            response = try await route(s3, request.body, payload)
        } catch {
            logger.info("\(request.method) → \(error.code.name)")
            response = error.response(requestId: requestId, head: isHead)
        }
        response.headers[.s3RequestId] = requestId
        response.headers[.server] = "GQLStorageEmulator"
        return response
    }

    private func route(
        _ request: S3Request, _ body: RequestBody, _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        let method = request.method
        guard let bucket = request.bucket else {
            guard method == .get else { throw Self.notAllowed(method) }
            return listBuckets()
        }
        guard let key = request.key else {
            switch method {
            case .put: return try createBucket(bucket)
            case .delete: return try deleteBucket(bucket)
            case .head: return try headBucket(bucket)
            case .get:
                if request.has("location") { return try location(bucket) }
                if request.has("uploads") { return try listUploads(bucket) }
                if let unsupported = Self.unsupportedSubresource(request) { throw unsupported }
                return try request.parameter("list-type") == "2"
                    ? listObjectsV2(bucket, request) : listObjectsV1(bucket, request)
            case .post:
                guard request.has("delete") else { throw Self.notAllowed(method) }
                return try await deleteObjects(bucket, request, body, payload)
            default: throw Self.notAllowed(method)
            }
        }
        if let unsupported = Self.unsupportedSubresource(request) { throw unsupported }
        switch method {
        case .put:
            if let uploadId = request.parameter("uploadId") {
                return try await uploadPart(bucket, key, uploadId, request, body, payload)
            }
            if request.header("x-amz-copy-source") != nil { return try await copyObject(bucket, key, request) }
            return try await putObject(bucket, key, request, body, payload)
        case .get:
            if let uploadId = request.parameter("uploadId") { return try listParts(bucket, key, uploadId, request) }
            return try getObject(bucket, key, request, head: false)
        case .head:
            return try getObject(bucket, key, request, head: true)
        case .delete:
            if let uploadId = request.parameter("uploadId") {
                try await uploads.abort(uploadId, bucket: bucket, key: key)
                return Response(status: .noContent)
            }
            try store.delete(bucket, key)
            return Response(status: .noContent)
        case .post:
            if request.has("uploads") { return try createUpload(bucket, key, request) }
            if let uploadId = request.parameter("uploadId") {
                return try await completeUpload(bucket, key, uploadId, request, body, payload)
            }
            throw Self.notAllowed(method)
        default:
            throw Self.notAllowed(method)
        }
    }

    /// Sub-resources S3 has and the emulator does not (ACLs, tagging, versioning …): `NotImplemented`, not a
    /// silent wrong answer.
    private static func unsupportedSubresource(_ request: S3Request) -> S3Error? {
        let unsupported = [
            "acl", "tagging", "versioning", "versionId", "versions", "policy", "cors", "lifecycle", "website",
            "replication", "encryption", "notification", "logging", "object-lock", "retention", "legal-hold",
            "torrent", "restore", "select", "attributes", "accelerate", "analytics", "inventory", "metrics",
            "ownershipControls", "publicAccessBlock", "requestPayment", "intelligent-tiering",
        ]
        guard let name = unsupported.first(where: request.has) else { return nil }
        return S3Error(
            .notImplemented, "A header or query you provided implies functionality that is not implemented",
            details: [("Header", "?\(name)")])
    }

    static func notAllowed(_ method: HTTPRequest.Method) -> S3Error {
        S3Error(
            .methodNotAllowed, "The specified method is not allowed against this resource.",
            details: [("Method", method.rawValue), ("ResourceType", "OBJECT")])
    }

    /// A 200 with an XML body.
    static func xml(_ writer: XMLWriter, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/xml"
        headers[.contentLength] = String(writer.text.utf8.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: writer.text)))
    }

    /// S3's timestamps in XML: ISO 8601 with milliseconds, UTC.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// An ETag as S3 writes it: in double quotes.
    static func quoted(_ etag: String) -> String { "\"\(etag)\"" }

    /// A request's ETag with its quotes removed (clients send both).
    static func unquoted(_ etag: String) -> String {
        var text = etag.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("W/") { text.removeFirst(2) }
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        return text
    }
}

// Header names spelled here as constants: valid tokens, so `init?` cannot fail on them (the force unwrap
// is on no caller's, file's or server's value).
// swift-format-ignore: NeverForceUnwrap
extension HTTPField.Name {
    static let s3RequestId = HTTPField.Name("x-amz-request-id")!
}
