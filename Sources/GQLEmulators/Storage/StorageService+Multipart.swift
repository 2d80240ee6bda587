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
        let (algorithm, type) = try StoredUpload.checksumSetting(request)
        let upload = try uploads.create(
            StoredUpload(
                id: "", bucket: bucket, key: key, initiated: configuration.clock(), headers: headers,
                metadata: metadata, checksumAlgorithm: algorithm, checksumType: type))
        var xml = XMLWriter()
        xml.open("InitiateMultipartUploadResult", namespace: true)
        xml.element("Bucket", bucket)
        xml.element("Key", key)
        xml.element("UploadId", upload.id)
        xml.close("InitiateMultipartUploadResult")
        var response = Self.xml(xml)
        if let algorithm, let type {
            response.headers[.checksumAlgorithm] = algorithm
            response.headers[.checksumType] = type
        }
        return response
    }

    func uploadPart(
        _ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request, _ body: RequestBody,
        _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        guard let numberText = request.parameter("partNumber") else {
            throw S3Error(
                .invalidArgument, "Part number must be an integer between 1 and 10000, inclusive",
                details: [("ArgumentName", "partNumber")])
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
        try upload.checkPart(request)
        // The parts' CRC-64/NVMEs make the object's CRC-64/NVME (S3's default, or the upload's algorithm), unless
        // the upload was started with CRC32.
        let (received, checksums) = try await receiveChecked(
            body, request, payload, maxBytes: configuration.maxObjectBytes, crc64: upload.checksumAlgorithm != "CRC32")
        let part = StoredUpload.Part(
            number: number, size: received.size, etag: Bytes.hex(received.md5),
            checksumCRC32: checksums.crc32 ?? received.crc32.base64, checksumCRC64NVME: received.crc64?.base64,
            lastModified: configuration.clock(), file: "")
        try await uploads.addPart(uploadId, temporary: received.temporary, part)
        var headers = HTTPFields()
        headers[.eTag] = Self.quoted(part.etag)
        // The checksum the part sent, or the one of the upload's algorithm.
        if checksums.crc32 != nil || upload.checksumAlgorithm == "CRC32" {
            headers[.checksumCRC32] = part.checksumCRC32
        }
        if StoredUpload.declaredAlgorithm(request) == "CRC64NVME" || upload.checksumAlgorithm == "CRC64NVME" {
            headers[.checksumCRC64NVME] = part.checksumCRC64NVME
        }
        if upload.checksumAlgorithm == "MD5" { headers[.checksumMD5] = upload.storedChecksum(part) }
        return Response(status: .ok, headers: headers)
    }

    func listParts(_ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request) throws(S3Error)
        -> Response
    {
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
        if let algorithm = upload.checksumAlgorithm, let mode = upload.checksumMode {
            xml.element("ChecksumAlgorithm", algorithm)
            xml.element("ChecksumType", mode)
        }
        for part in page {
            xml.open("Part")
            xml.element("PartNumber", String(part.number))
            xml.element("LastModified", Self.timestamp(part.lastModified))
            xml.element("ETag", Self.quoted(part.etag))
            if let checksum = upload.listedChecksum(part) {
                xml.element("Checksum" + checksum.algorithm, checksum.value)
            }
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
            if let algorithm = upload.checksumAlgorithm, let mode = upload.checksumMode {
                xml.element("ChecksumAlgorithm", algorithm)
                xml.element("ChecksumType", mode)
            }
            xml.close("Upload")
        }
        xml.close("ListMultipartUploadsResult")
        return Self.xml(xml)
    }

    func completeUpload(
        _ bucket: String, _ key: String, _ uploadId: String, _ request: S3Request, _ body: RequestBody,
        _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        let started = try uploads.upload(uploadId, bucket: bucket, key: key)
        // Its checksum headers are the object's, not the XML body's.
        let document = try await xmlBody(body, request, payload, headersDescribeBody: false)
        guard document.name == "CompleteMultipartUpload" else { throw Self.malformedXML }
        var listed: [(number: Int, etag: String, checksums: [(algorithm: String, value: String)])] = []
        for part in document.all("Part") {
            guard let number = part.child("PartNumber").flatMap({ Int($0) }), let etag = part.child("ETag") else {
                throw Self.malformedXML
            }
            listed.append((number, Self.unquoted(etag), StoredUpload.listedChecksums(part)))
        }
        guard !listed.isEmpty else {
            throw S3Error(
                .malformedXML,
                "The XML you provided was not well-formed or did not validate against our published schema")
        }
        if let type = request.header("x-amz-checksum-type")?.uppercased(), type != started.checksumMode {
            throw S3Error(
                .invalidRequest,
                "The upload was created using the \(started.checksumMode ?? "null") checksum mode. The complete request "
                    + "must use the same checksum mode.")
        }
        let minimum = configuration.minimumPartSize
        var expected: (algorithm: String, value: String)?
        let upload = try await uploads.beginCompletion(uploadId, bucket: bucket, key: key) { upload throws(S3Error) in
            var total: Int64 = 0
            for (index, entry) in listed.enumerated() {
                if index > 0, entry.number <= listed[index - 1].number {
                    throw S3Error(
                        .invalidPartOrder,
                        "The list of parts was not in ascending order. The parts list must be specified in order by part number."
                    )
                }
                let invalidPart = S3Error(
                    .invalidPart,
                    "One or more of the specified parts could not be found. The part may not have been uploaded, "
                        + "or the specified entity tag may not match the part's entity tag.",
                    details: [("UploadId", uploadId), ("PartNumber", String(entry.number)), ("ETag", entry.etag)])
                guard let part = upload.parts[entry.number], part.etag == entry.etag else { throw invalidPart }
                try upload.checkListed(entry.checksums, for: part, invalidPart: invalidPart)
                if index < listed.count - 1, part.size < minimum {
                    throw S3Error(
                        .entityTooSmall, "Your proposed upload is smaller than the minimum allowed size",
                        details: [
                            ("ProposedSize", String(part.size)), ("MinSizeAllowed", String(minimum)),
                            ("PartNumber", String(part.number)), ("ETag", part.etag),
                        ])
                }
                total += part.size
            }
            if let size = request.header("x-amz-mp-object-size"), Int64(size) != total {
                throw S3Error(
                    .invalidRequest,
                    "The provided 'x-amz-mp-object-size' header value \(size) does not match what was computed: \(total)"
                )
            }
            expected = try upload.completionChecksum(request)
        }
        let parts = listed.compactMap { upload.parts[$0.number] }
        let (etag, object): (String, StoredObject)
        // Until it ends the upload stays listed, unchanged; a completion that fails (a checksum that is not the
        // object's, a disk error) leaves it as it was, to be completed again or aborted.
        do throws(S3Error) {
            await configuration.whileCompleting?(uploadId)
            (etag, object) = try await commit(upload, parts: parts, bucket: bucket, key: key, expected: expected)
        } catch {
            uploads.endCompletion(uploadId, completed: false)
            throw error
        }
        uploads.endCompletion(uploadId, completed: true)
        uploads.removeFiles(uploadId)
        var xml = XMLWriter()
        xml.open("CompleteMultipartUploadResult", namespace: true)
        xml.element("Location", "/\(bucket)/\(key)")
        xml.element("Bucket", bucket)
        xml.element("Key", key)
        xml.element("ETag", Self.quoted(etag))
        if let crc = object.checksumCRC32 {
            xml.element("ChecksumCRC32", crc)
            xml.element("ChecksumType", Self.checksumType(crc32: crc))
        } else if let crc = object.checksumCRC64NVME {
            xml.element("ChecksumCRC64NVME", crc)
            xml.element("ChecksumType", "FULL_OBJECT")
        }
        xml.close("CompleteMultipartUploadResult")
        return Self.xml(xml)
    }

    /// The upload's object from `parts`: concatenated, stored under `key`; its ETag and its record. Its checksum
    /// (``StoredUpload/objectChecksums(_:)``) is combined from the parts' before their bytes are joined; a
    /// full-object checksum the completion sent (`expected`) that is not the object's is `BadDigest`.
    private func commit(
        _ upload: StoredUpload, parts: [StoredUpload.Part], bucket: String, key: String,
        expected: (algorithm: String, value: String)?
    ) async throws(S3Error) -> (etag: String, object: StoredObject) {
        var md5s: [UInt8] = []
        for part in parts { md5s += Bytes.unhex(part.etag) ?? [] }
        let etag = Bytes.hex(MD5.hash(md5s)) + "-\(parts.count)"
        let (crc32, combined) = upload.objectChecksums(parts)
        // A part's record from before the emulator kept CRC-64/NVMEs: computed over the joined bytes instead.
        let computes = crc32 == nil && combined == nil
        if !computes { try StoredUpload.verify(expected, crc32: crc32, crc64: combined) }
        let (temporary, size, computed) = try await concatenate(upload.id, parts, computesCRC64: computes)
        let crc64 = combined ?? computed
        do throws(S3Error) {
            if computes { try StoredUpload.verify(expected, crc32: crc32, crc64: crc64) }
            let object = StoredObject(
                key: key, size: size, etag: etag, lastModified: configuration.clock(), dataFile: "",
                headers: upload.headers, metadata: upload.metadata, checksumCRC32: crc32,
                checksumCRC64NVME: crc64?.base64)
            try store.commit(bucket, temporary: temporary, object)
            return (etag, object)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The parts' bytes one after the other in a new temporary file; its URL, its size and, when asked, its
    /// CRC-64/NVME.
    private func concatenate(_ uploadId: String, _ parts: [StoredUpload.Part], computesCRC64: Bool)
        async throws(S3Error) -> (URL, Int64, CRC64NVME?)
    {
        do {
            let temporary = try store.folder.temporaryFileURL()
            let target = try OpenFile.creating(temporary)
            var size: Int64 = 0
            var crc64: CRC64NVME? = computesCRC64 ? CRC64NVME() : nil
            for part in parts {
                guard let source = try OpenFile.reading(uploads.partURL(uploadId, part)) else {
                    throw GQLError(.io, "Part \(part.number)'s file is missing.")
                }
                var offset: Int64 = 0
                while offset < part.size {
                    let chunk = try await source.read(at: offset, count: Int(min(Int64(1 << 20), part.size - offset)))
                    guard chunk.readableBytes > 0 else { throw GQLError(.io, "Part \(part.number)'s file is short.") }
                    if crc64 != nil { chunk.withUnsafeReadableBytes { crc64?.update($0) } }
                    try await offload { try chunk.withUnsafeReadableBytes { try target.writeAll($0) } }
                    offset += Int64(chunk.readableBytes)
                }
                size += part.size
            }
            try await offload { try target.synchronize() }
            return (temporary, size, crc64)
        } catch {
            throw S3Error(.internalError, "The parts could not be joined: \(error)")
        }
    }
}
