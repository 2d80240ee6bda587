import Foundation
import GQLCore
import GQLCrypto
import NIOHTTP1

extension GQLStorage {
    /// Stores `data` as the object `key` of `bucket`, replacing any object of that key.
    ///
    /// ```swift
    /// try await storage.upload("bucket", "folder/file name+(1).png", data, contentType: "image/png")
    /// ```
    /// The body's SHA-256 is signed, so S3 refuses a body altered on the way, and its CRC-32 is sent for S3 to
    /// check (``Configuration/sendsChecksums``).
    /// - Returns: the object's ETag, without quotes.
    @discardableResult
    public func upload(_ bucket: String, _ key: String, _ data: Data, contentType: String? = nil) async throws
        -> String
    {
        var call = Call(method: "PUT", bucket: bucket, key: key, body: data, operation: "upload")
        if let contentType { call.headers.append(("Content-Type", contentType)) }
        if configuration.sendsChecksums { call.headers += Self.checksumHeaders(CRC32(data)) }
        let response = try await send(call)
        return Self.unquoted(response.headers.first(name: "ETag") ?? "")
    }

    /// The object `key` of `bucket`, in memory (up to ``Configuration/maximumInMemoryDownload`` bytes; use
    /// ``download(_:_:to:progress:)`` for larger objects).
    ///
    /// ```swift
    /// let data = try await storage.download("bucket", "folder/file name+(1).png")
    /// ```
    /// - Throws: ``GQLError`` `.notFound` when there is no such object; `.invalidResponse` when the body does
    ///   not match the object's ETag, or the whole-object CRC S3 answered for it (see ``download(_:_:to:progress:)``).
    public func download(_ bucket: String, _ key: String) async throws -> Data {
        var call = Call(method: "GET", bucket: bucket, key: key, operation: "download")
        call.headers.append(Self.checksumMode)
        let response = try await send(call)
        try BodyCheck.requireWholeObject(status: response.status, response.headers, call: call)
        if let check = BodyCheck(response.headers) { try check.verify(check.digest(of: response.body), call: call) }
        return response.body
    }

    /// Deletes the object `key` of `bucket`; deleting a missing object succeeds, as in S3.
    ///
    /// ```swift
    /// try await storage.delete("bucket", "folder/old.png")
    /// ```
    public func delete(_ bucket: String, _ key: String) async throws {
        _ = try await send(Call(method: "DELETE", bucket: bucket, key: key, operation: "delete"))
    }

    /// The size, ETag and modification date of the object `key`, or nil when there is none.
    ///
    /// ```swift
    /// if let info = try await storage.info("bucket", "a.png") { print(info.size) }
    /// ```
    public func info(_ bucket: String, _ key: String) async throws -> Object? {
        do {
            let response = try await send(Call(method: "HEAD", bucket: bucket, key: key, operation: "info"))
            return Object(
                key: key, size: response.headers.first(name: "Content-Length").flatMap(Int.init) ?? 0,
                etag: Self.unquoted(response.headers.first(name: "ETag") ?? ""),
                lastModified: response.headers.first(name: "Last-Modified").flatMap(Self.httpDate))
        } catch let error as GQLError where error.code == .notFound {
            return nil
        }
    }

    /// Creates `bucket` (in the storage's region).
    ///
    /// ```swift
    /// try await storage.createBucket("uploads")
    /// ```
    public func createBucket(_ bucket: String) async throws {
        var call = Call(method: "PUT", bucket: bucket, key: nil, operation: "createBucket")
        if region != "us-east-1" {
            call.body = Data(
                ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<LocationConstraint>\(S3XML.escape(region))</LocationConstraint></CreateBucketConfiguration>")
                    .utf8)
        }
        _ = try await send(call)
    }

    /// Deletes the empty `bucket`.
    public func deleteBucket(_ bucket: String) async throws {
        _ = try await send(Call(method: "DELETE", bucket: bucket, key: nil, operation: "deleteBucket"))
    }

    // MARK: - Helpers

    /// The headers that send `crc` as the body's checksum, as the AWS SDKs do.
    static func checksumHeaders(_ crc: CRC32) -> [(name: String, value: String)] {
        [("x-amz-checksum-crc32", crc.base64), ("x-amz-sdk-checksum-algorithm", "CRC32")]
    }

    static func unquoted(_ etag: String) -> String {
        etag.count >= 2 && etag.hasPrefix("\"") && etag.hasSuffix("\"") ? String(etag.dropFirst().dropLast()) : etag
    }

    /// The MD5 digest an answer's ETag promises for its body, or nil when the ETag is not one: S3's ETag is the MD5
    /// of the body only for an object stored in one part, unencrypted or encrypted with S3's own keys (SSE-S3). A
    /// multipart object's ETag (`…-N`, a digest of its parts' digests), an object encrypted with KMS
    /// (`x-amz-server-side-encryption: aws:kms` or `aws:kms:dsse`) or with a customer's key, and an ETag of any
    /// other shape (a server's own, as nginx's `"6565a1b2-10000000"`) are not digests of the body: nothing to check,
    /// and no MD5 is computed for them.
    static func etagMD5(_ headers: HTTPHeaders) -> [UInt8]? {
        let encryption = headers.first(name: "x-amz-server-side-encryption")?.lowercased() ?? ""
        guard encryption.isEmpty || encryption == "aes256",
            headers.first(name: "x-amz-server-side-encryption-customer-algorithm") == nil,
            let etag = headers.first(name: "ETag").map(unquoted), etag.utf8.count == 32
        else { return nil }
        return Bytes.unhex(etag)
    }

    /// Asks S3 for the object's checksum with its body (GetObject's `x-amz-checksum-mode`), as the AWS SDKs do by
    /// default; ``BodyCheck`` compares it with the body.
    static let checksumMode = (name: "x-amz-checksum-mode", value: "ENABLED")

    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
