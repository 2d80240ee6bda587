import Foundation
import GQLCore
import GQLCrypto

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
            let parts = try await uploadParts(uploadId: uploadId, progress: progress)
            return try await complete(uploadId: uploadId, parts: parts)
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
        // S3 then expects each part's CRC-32 and computes the object's composite checksum from them.
        if storage.configuration.sendsChecksums { create.headers.append(("x-amz-checksum-algorithm", "CRC32")) }
        create.maximumResponseSize = storage.configuration.maximumXMLResponseSize
        let response = try await storage.send(create)
        guard let id = try storage.parseXML(response, call: create)?["UploadId"], !id.isEmpty else {
            throw GQLError(
                .invalidResponse, "S3 started a multipart upload of \(bucket)/\(key) without an UploadId",
                operation: "upload")
        }
        return id
    }

    /// What S3 answered for a part: its ETag, and the CRC-32 it was sent with (when checksums are sent).
    struct Part: Sendable {
        var etag = ""
        var crc: CRC32?
    }

    /// Uploads every part, at most ``GQLStorage/Configuration/maximumConcurrentParts`` at a time; the parts by
    /// part number.
    private func uploadParts(uploadId: String, progress: GQLStorage.Progress?) async throws -> [Part] {
        let partSize = partSize
        let count = Int((size + partSize - 1) / partSize)
        let sent = GQLLocked<Int64>(0)
        let width = max(storage.configuration.maximumConcurrentParts, 1)
        return try await withThrowingTaskGroup(of: (Int, Part).self) { group in
            var parts = [Part](repeating: Part(), count: count)
            var next = 0
            func start() {
                let number = next + 1
                let offset = Int64(next) * partSize
                let length = Int(min(partSize, size - offset))
                next += 1
                group.addTask {
                    let part = try await uploadPart(number, offset: offset, length: length, uploadId: uploadId)
                    let done = sent.withLock { total in
                        total += Int64(length)
                        return total
                    }
                    progress?(done, size)
                    return (number, part)
                }
            }
            while next < min(width, count) { start() }
            while let (number, part) = try await group.next() {
                parts[number - 1] = part
                if next < count { start() }
            }
            return parts
        }
    }

    private func uploadPart(_ number: Int, offset: Int64, length: Int, uploadId: String) async throws -> Part {
        var part = call("PUT", [("partNumber", String(number)), ("uploadId", uploadId)], operation: "upload")
        part.body = try GQLStorage.read(file, offset: offset, count: length)
        let crc = storage.configuration.sendsChecksums ? CRC32(part.body) : nil
        if let crc { part.headers += GQLStorage.checksumHeaders(crc) }
        let response = try await storage.send(part)
        guard let etag = response.headers.first(name: "ETag"), !etag.isEmpty else {
            throw GQLError(
                .invalidResponse, "S3 accepted part \(number) of \(bucket)/\(key) without an ETag", operation: "upload")
        }
        return Part(etag: etag, crc: crc)
    }

    private func complete(uploadId: String, parts: [Part]) async throws -> String {
        var complete = call("POST", [("uploadId", uploadId)], operation: "upload")
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for (index, part) in parts.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(S3XML.escape(part.etag))</ETag>"
            if let crc = part.crc { xml += "<ChecksumCRC32>\(crc.base64)</ChecksumCRC32>" }
            xml += "</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        complete.body = Data(xml.utf8)
        complete.headers.append(("Content-Type", "application/xml"))
        complete.maximumResponseSize = storage.configuration.maximumXMLResponseSize
        let response = try await storage.send(complete)
        let result = try storage.parseXML(response, call: complete)
        // S3 answers the composite checksum it computed from the parts it stored; it must be the one sent.
        let crcs = parts.compactMap(\.crc)
        if crcs.count == parts.count, let answered = result?["ChecksumCRC32"], !answered.isEmpty,
            !CRC32.isComposite(answered, of: crcs)
        {
            throw GQLError(
                .invalidResponse,
                "S3 completed \(bucket)/\(key) with the checksum \(answered), not \(CRC32.composite(crcs)) of the parts "
                    + "sent", operation: "upload")
        }
        return GQLStorage.unquoted(result?["ETag"] ?? "")
    }

    private func abort(uploadId: String) async throws {
        _ = try await storage.send(call("DELETE", [("uploadId", uploadId)], operation: "upload"))
    }
}
