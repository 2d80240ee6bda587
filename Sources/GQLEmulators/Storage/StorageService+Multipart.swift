import Foundation
import GQLCore
import GQLCrypto
import HTTPTypes
import Hummingbird

/// CreateMultipartUpload, UploadPart, ListParts, CompleteMultipartUpload, AbortMultipartUpload,
/// ListMultipartUploads.
extension StorageService {
    func createUpload(_ bucket: String, _ key: String, _ request: S3Request) throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        let (headers, metadata) = try Self.objectHeaders(request)
        let algorithm = request.header("x-amz-checksum-algorithm")?.uppercased()
        let upload = try uploads.create(
            StoredUpload(
                id: "", bucket: bucket, key: key, initiated: configuration.clock(), headers: headers,
                metadata: metadata, checksumAlgorithm: algorithm == "CRC32" ? "CRC32" : nil))
        var xml = XMLWriter()
        xml.open("InitiateMultipartUploadResult", namespace: true)
        xml.element("Bucket", bucket)
        xml.element("Key", key)
        xml.element("UploadId", upload.id)
        xml.close("InitiateMultipartUploadResult")
        var response = Self.xml(xml)
        if let algorithm { response.headers[HTTPField.Name("x-amz-checksum-algorithm")!] = algorithm }
        return response
    }

    func uploadPart(
        _ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request, _ body: RequestBody,
        _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        guard let numberText = request.parameter("partNumber") else {
            throw S3Error(.invalidArgument, "Part number must be an integer between 1 and 10000, inclusive", details: [("ArgumentName", "partNumber")])
        }
        guard let number = Int(numberText), (1...10_000).contains(number) else {
            throw S3Error(
                .invalidArgument, "Part number must be an integer between 1 and 10000, inclusive",
                details: [("ArgumentName", "partNumber"), ("ArgumentValue", numberText)])
        }
        if request.header("x-amz-copy-source") != nil {
            throw S3Error(.notImplemented, "UploadPartCopy is not implemented by the storage emulator.")
        }
        let upload = try uploads.upload(uploadId, bucket: bucket, key: key)
        // The parts' CRC-64/NVMEs make the object's default checksum, unless the upload was started with CRC32.
        let (received, checksums) = try await receiveChecked(
            body, request, payload, maxBytes: configuration.maxObjectBytes, crc64: upload.checksumAlgorithm == nil)
        let part = StoredUpload.Part(
            number: number, size: received.size, etag: Bytes.hex(received.md5),
            checksumCRC32: checksums.crc32 ?? received.crc32.base64, checksumCRC64NVME: received.crc64?.base64,
            lastModified: configuration.clock(), file: "")
        try uploads.addPart(uploadId, temporary: received.temporary, part)
        var headers = HTTPFields()
        headers[.eTag] = Self.quoted(part.etag)
        if let crc = checksums.crc32 { headers[.checksumCRC32] = crc }
        return Response(status: .ok, headers: headers)
    }

    func listParts(_ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request) throws(S3Error) -> Response {
        let upload = try uploads.upload(uploadId, bucket: bucket, key: key)
        let marker = request.parameter("part-number-marker").flatMap { Int($0) } ?? 0
        let maxParts = min(request.parameter("max-parts").flatMap { Int($0) } ?? 1000, 1000)
        let all = upload.parts.values.filter { $0.number > marker }.sorted { $0.number < $1.number }
        let page = all.prefix(max(0, maxParts))
        var xml = XMLWriter()
        xml.open("ListPartsResult", namespace: true)
        xml.element("Bucket", bucket)
        xml.element("Key", key)
        xml.element("UploadId", uploadId)
        xml.element("PartNumberMarker", String(marker))
        if let last = page.last { xml.element("NextPartNumberMarker", String(last.number)) }
        xml.element("MaxParts", String(maxParts))
        xml.element("IsTruncated", page.count < all.count ? "true" : "false")
        xml.element("StorageClass", "STANDARD")
        if let algorithm = upload.checksumAlgorithm { xml.element("ChecksumAlgorithm", algorithm) }
        for part in page {
            xml.open("Part")
            xml.element("PartNumber", String(part.number))
            xml.element("LastModified", Self.timestamp(part.lastModified))
            xml.element("ETag", Self.quoted(part.etag))
            if upload.checksumAlgorithm != nil, let crc = part.checksumCRC32 { xml.element("ChecksumCRC32", crc) }
            xml.element("Size", String(part.size))
            xml.close("Part")
        }
        xml.close("ListPartsResult")
        return Self.xml(xml)
    }

    func listUploads(_ bucket: String) throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        var xml = XMLWriter()
        xml.open("ListMultipartUploadsResult", namespace: true)
        xml.element("Bucket", bucket)
        xml.element("KeyMarker", "")
        xml.element("UploadIdMarker", "")
        xml.element("MaxUploads", "1000")
        xml.element("IsTruncated", "false")
        for upload in uploads.uploads(in: bucket).prefix(1000) {
            xml.open("Upload")
            xml.element("Key", upload.key)
            xml.element("UploadId", upload.id)
            xml.element("StorageClass", "STANDARD")
            xml.element("Initiated", Self.timestamp(upload.initiated))
            xml.close("Upload")
        }
        xml.close("ListMultipartUploadsResult")
        return Self.xml(xml)
    }

    func completeUpload(
        _ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request, _ body: RequestBody,
        _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        _ = try uploads.upload(uploadId, bucket: bucket, key: key)
        let document = try await xmlBody(body, request, payload)
        guard document.name == "CompleteMultipartUpload" else { throw Self.malformedXML }
        var listed: [(number: Int, etag: String, crc: String?)] = []
        for part in document.all("Part") {
            guard let number = part.child("PartNumber").flatMap({ Int($0) }), let etag = part.child("ETag") else {
                throw Self.malformedXML
            }
            listed.append((number, Self.unquoted(etag), part.child("ChecksumCRC32")))
        }
        guard !listed.isEmpty else {
            throw S3Error(.malformedXML, "The XML you provided was not well-formed or did not validate against our published schema")
        }
        let minimum = configuration.minimumPartSize
        let upload = try uploads.take(uploadId, bucket: bucket, key: key) { upload throws(S3Error) in
            for (index, entry) in listed.enumerated() {
                if index > 0, entry.number <= listed[index - 1].number {
                    throw S3Error(.invalidPartOrder, "The list of parts was not in ascending order. The parts list must be specified in order by part number.")
                }
                guard let part = upload.parts[entry.number], part.etag == entry.etag,
                    entry.crc == nil || entry.crc == part.checksumCRC32
                else {
                    throw S3Error(
                        .invalidPart,
                        "One or more of the specified parts could not be found. The part may not have been uploaded, "
                            + "or the specified entity tag may not match the part's entity tag.",
                        details: [("UploadId", uploadId), ("PartNumber", String(entry.number)), ("ETag", entry.etag)])
                }
                if index < listed.count - 1, part.size < minimum {
                    throw S3Error(
                        .entityTooSmall, "Your proposed upload is smaller than the minimum allowed size",
                        details: [
                            ("ProposedSize", String(part.size)), ("MinSizeAllowed", String(minimum)),
                            ("PartNumber", String(part.number)), ("ETag", part.etag),
                        ])
                }
            }
        }
        let parts = listed.compactMap { upload.parts[$0.number] }
        let (etag, object): (String, StoredObject)
        // A completion that fails (a disk error) leaves the upload as it was, to be completed again or aborted.
        do throws(S3Error) {
            (etag, object) = try await commit(upload, parts: parts, bucket: bucket, key: key)
        } catch {
            uploads.putBack(uploadId, upload)
            throw error
        }
        uploads.removeFiles(uploadId)
        var xml = XMLWriter()
        xml.open("CompleteMultipartUploadResult", namespace: true)
        xml.element("Location", "/\(bucket)/\(key)")
        xml.element("Bucket", bucket)
        xml.element("Key", key)
        xml.element("ETag", Self.quoted(etag))
        if let crc = object.checksumCRC32 {
            xml.element("ChecksumCRC32", crc)
            xml.element("ChecksumType", "COMPOSITE")
        } else if let crc = object.checksumCRC64NVME {
            xml.element("ChecksumCRC64NVME", crc)
            xml.element("ChecksumType", "FULL_OBJECT")
        }
        xml.close("CompleteMultipartUploadResult")
        return Self.xml(xml)
    }

    /// The upload's object from `parts`: concatenated, stored under `key`; its ETag and its record. Its checksum
    /// is the composite CRC-32 of an upload started with CRC32, otherwise S3's default, the CRC-64/NVME of the
    /// whole object, combined from the parts' (none when a part's record predates them).
    private func commit(_ upload: StoredUpload, parts: [StoredUpload.Part], bucket: String, key: String)
        async throws(S3Error) -> (etag: String, object: StoredObject)
    {
        let (temporary, size) = try await concatenate(upload.id, parts)
        var md5s: [UInt8] = []
        for part in parts { md5s += Bytes.unhex(part.etag) ?? [] }
        let etag = Bytes.hex(MD5.hash(md5s)) + "-\(parts.count)"
        var crc: String?
        if upload.checksumAlgorithm == "CRC32" {
            var whole = CRC32()
            for part in parts { whole.update(Array(Data(base64Encoded: part.checksumCRC32 ?? "") ?? Data())) }
            crc = "\(whole.base64)-\(parts.count)"
        }
        var crc64: String?
        if crc == nil {
            var whole: CRC64NVME? = CRC64NVME()
            for part in parts {
                guard let text = part.checksumCRC64NVME, let partCRC = CRC64NVME(base64: text) else {
                    whole = nil
                    break
                }
                whole = whole.map { CRC64NVME.combine($0, partCRC, part.size) }
            }
            crc64 = whole?.base64
        }
        let object = StoredObject(
            key: key, size: size, etag: etag, lastModified: configuration.clock(), dataFile: "",
            headers: upload.headers, metadata: upload.metadata, checksumCRC32: crc, checksumCRC64NVME: crc64)
        try store.commit(bucket, temporary: temporary, object)
        return (etag, object)
    }

    /// The parts' bytes one after the other in a new temporary file; its URL and size.
    private func concatenate(_ uploadId: String, _ parts: [StoredUpload.Part]) async throws(S3Error) -> (URL, Int64) {
        do {
            let temporary = try store.folder.temporaryFileURL()
            let target = try OpenFile.creating(temporary)
            var size: Int64 = 0
            for part in parts {
                guard let source = try OpenFile.reading(uploads.partURL(uploadId, part)) else {
                    throw GQLError(.io, "Part \(part.number)'s file is missing.")
                }
                var offset: Int64 = 0
                while offset < part.size {
                    let chunk = try await source.read(at: offset, count: Int(min(Int64(1 << 20), part.size - offset)))
                    guard chunk.readableBytes > 0 else { throw GQLError(.io, "Part \(part.number)'s file is short.") }
                    try await offload { try chunk.withUnsafeReadableBytes { try target.writeAll($0) } }
                    offset += Int64(chunk.readableBytes)
                }
                size += part.size
            }
            try await offload { try target.synchronize() }
            return (temporary, size)
        } catch {
            throw S3Error(.internalError, "The parts could not be joined: \(error)")
        }
    }
}
