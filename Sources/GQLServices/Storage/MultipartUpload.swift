import Foundation
import GQLCore

/// One multipart upload of a file: create, parts in parallel (bounded), complete — or abort on any failure, so
/// S3 keeps no orphaned parts.
struct MultipartUpload: Sendable {
    let storage: GQLStorage
    let bucket: String
    let key: String
    let file: URL
    let size: Int64

    /// S3's limits: parts of at least 5 MiB (but the last), at most 10,000 parts.
    static let minimumPartSize = 5 << 20
    static let maximumParts = 10_000

    /// The part size: the configured one, at least 5 MiB, grown when the file would need more than 10,000 parts.
    var partSize: Int64 {
        let configured = Int64(max(storage.configuration.partSize, Self.minimumPartSize))
        let needed = (size + Int64(Self.maximumParts) - 1) / Int64(Self.maximumParts)
        return max(configured, needed)
    }

    func run(contentType: String?, progress: GQLStorage.Progress?) async throws -> String {
        let uploadId = try await create(contentType: contentType)
        do {
            let etags = try await uploadParts(uploadId: uploadId, progress: progress)
            return try await complete(uploadId: uploadId, etags: etags)
        } catch {
            // Abort even when the task was cancelled: the parts would otherwise stay stored and billed.
            await Task { try? await abort(uploadId: uploadId) }.value
            throw error
        }
    }

    private func call(_ method: String, _ query: [(name: String, value: String)], operation: String)
        -> GQLStorage.Call
    {
        GQLStorage.Call(method: method, bucket: bucket, key: key, query: query, operation: operation)
    }

    private func create(contentType: String?) async throws -> String {
        var create = call("POST", [("uploads", "")], operation: "upload")
        if let contentType { create.headers.append(("Content-Type", contentType)) }
        let response = try await storage.send(create)
        guard let id = S3XML.parse(response.body)?["UploadId"], !id.isEmpty else {
            throw GQLError(
                .invalidResponse, "S3 started a multipart upload of \(bucket)/\(key) without an UploadId",
                operation: "upload")
        }
        return id
    }

    /// Uploads every part, at most ``GQLStorage/Configuration/maximumConcurrentParts`` at a time; the ETags by
    /// part number.
    private func uploadParts(uploadId: String, progress: GQLStorage.Progress?) async throws -> [String] {
        let partSize = partSize
        let count = Int((size + partSize - 1) / partSize)
        let sent = GQLLocked<Int64>(0)
        let width = max(storage.configuration.maximumConcurrentParts, 1)
        return try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var etags = [String](repeating: "", count: count)
            var next = 0
            func start() {
                let number = next + 1
                let offset = Int64(next) * partSize
                let length = Int(min(partSize, size - offset))
                next += 1
                group.addTask {
                    let etag = try await uploadPart(number, offset: offset, length: length, uploadId: uploadId)
                    let done = sent.withLock { total in
                        total += Int64(length)
                        return total
                    }
                    progress?(done, size)
                    return (number, etag)
                }
            }
            while next < min(width, count) { start() }
            while let (number, etag) = try await group.next() {
                etags[number - 1] = etag
                if next < count { start() }
            }
            return etags
        }
    }

    private func uploadPart(_ number: Int, offset: Int64, length: Int, uploadId: String) async throws -> String {
        var part = call("PUT", [("partNumber", String(number)), ("uploadId", uploadId)], operation: "upload")
        part.body = try GQLStorage.read(file, offset: offset, count: length)
        let response = try await storage.send(part)
        guard let etag = response.headers.first(name: "ETag"), !etag.isEmpty else {
            throw GQLError(
                .invalidResponse, "S3 accepted part \(number) of \(bucket)/\(key) without an ETag", operation: "upload")
        }
        return etag
    }

    private func complete(uploadId: String, etags: [String]) async throws -> String {
        var complete = call("POST", [("uploadId", uploadId)], operation: "upload")
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for (index, etag) in etags.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(S3XML.escape(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        complete.body = Data(xml.utf8)
        complete.headers.append(("Content-Type", "application/xml"))
        let response = try await storage.send(complete)
        return GQLStorage.unquoted(S3XML.parse(response.body)?["ETag"] ?? "")
    }

    private func abort(uploadId: String) async throws {
        _ = try await storage.send(call("DELETE", [("uploadId", uploadId)], operation: "upload"))
    }
}
