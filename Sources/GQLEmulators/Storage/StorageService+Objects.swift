import Foundation
import GQLCore
import GQLCrypto
import GQLDevServer
import HTTPTypes
import Hummingbird

/// PutObject, GetObject and HeadObject, CopyObject, DeleteObjects.
extension StorageService {
    /// The most bytes of user metadata (`x-amz-meta-` names and values) an object may carry, as S3.
    static let maxMetadataBytes = 2048

    func putObject(
        _ bucket: String, _ key: String, _ request: S3Request, _ body: RequestBody, _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        let (headers, metadata) = try Self.objectHeaders(request)
        let (received, checksums) = try await receiveChecked(
            body, request, payload, maxBytes: configuration.maxObjectBytes, crc64: Self.needsCRC64(request))
        let object = StoredObject(
            key: key, size: received.size, etag: Bytes.hex(received.md5), lastModified: configuration.clock(),
            dataFile: "", headers: headers, metadata: metadata, checksumCRC32: checksums.crc32,
            checksumCRC64NVME: checksums.crc64nvme)
        try store.commit(bucket, temporary: received.temporary, object)
        var answer = HTTPFields()
        answer[.eTag] = Self.quoted(object.etag)
        if let crc = checksums.crc32 { answer[.checksumCRC32] = crc }
        if let crc = checksums.crc64nvme { answer[.checksumCRC64NVME] = crc }
        if checksums.crc32 != nil || checksums.crc64nvme != nil { answer[.checksumType] = "FULL_OBJECT" }
        return Response(status: .ok, headers: answer)
    }

    /// Reads a body for an upload: its declared length (`x-amz-decoded-content-length` for `aws-chunked`) and
    /// the payload mode the signature set.
    func receive(
        _ body: RequestBody, _ request: S3Request, _ payload: SigV4Verifier.Payload, maxBytes: Int64,
        crc64: Bool = false
    ) async throws(S3Error) -> ReceivedBody {
        let declared: Int64?
        switch payload {
        case .signedChunks, .unsignedChunks:
            guard let text = request.header("x-amz-decoded-content-length"), let length = Int64(text), length >= 0
            else {
                throw S3Error(.missingContentLength, "You must provide the x-amz-decoded-content-length HTTP header.")
            }
            declared = length
        case .unsigned, .sha256:
            declared = request.header("content-length").flatMap { Int64($0) }
            if declared == nil, request.header("transfer-encoding") == nil {
                throw S3Error(.missingContentLength, "You must provide the Content-Length HTTP header.")
            }
        }
        if let declared, declared > maxBytes {
            throw S3Error(
                .entityTooLarge, "Your proposed upload exceeds the maximum allowed size",
                details: [("ProposedSize", String(declared)), ("MaxSizeAllowed", String(maxBytes))])
        }
        let receiver = BodyReceiver(
            folder: store.folder, bodyTimeout: configuration.limits.bodyTimeout,
            minimumRate: configuration.minimumBodyRate, maxBytes: maxBytes, computesCRC64: crc64)
        return try await receiver.receive(body, payload: payload, declaredLength: declared)
    }

    /// The checksums an upload keeps, in base64.
    struct UploadChecksums: Sendable {
        /// The CRC-32 it sent.
        var crc32: String?
        /// The CRC-64/NVME it sent, or, when it sent no checksum at all, the one S3 gives it by default.
        var crc64nvme: String?
    }

    /// Reads an upload's body and checks its digests (nothing is left behind when they do not match); the
    /// checksums it keeps. With `headersDescribeBody` false (CompleteMultipartUpload, whose checksum headers are
    /// the object's), only trailers are taken as the body's checksums.
    func receiveChecked(
        _ body: RequestBody, _ request: S3Request, _ payload: SigV4Verifier.Payload, maxBytes: Int64,
        crc64: Bool = false, headersDescribeBody: Bool = true
    ) async throws(S3Error) -> (ReceivedBody, UploadChecksums) {
        let received = try await receive(body, request, payload, maxBytes: maxBytes, crc64: crc64)
        do {
            return (received, try Self.checkDigests(received, request, headersDescribeBody: headersDescribeBody))
        } catch {
            try? FileManager.default.removeItem(at: received.temporary)
            throw error
        }
    }

    /// Checks `Content-MD5`, and a CRC-32 or a CRC-64/NVME sent as a header or a trailer. What the upload keeps:
    /// what it sent of those two, or, when it sent no checksum at all, S3's default: the CRC-64/NVME of its bytes.
    /// An MD5 sent so is checked too. (The emulator keeps no other algorithm's checksum: an upload that sends one
    /// of those, or an MD5, keeps none.)
    static func checkDigests(
        _ received: ReceivedBody, _ request: S3Request, headersDescribeBody: Bool = true
    ) throws(S3Error) -> UploadChecksums {
        if let md5 = request.header("content-md5") {
            guard let sent = Data(base64Encoded: md5), sent.count == 16 else {
                throw S3Error(
                    .invalidDigest, "The Content-MD5 you specified was invalid.", details: [("Content-MD5", md5)])
            }
            guard Array(sent) == received.md5 else {
                throw S3Error(
                    .badDigest, "The Content-MD5 you specified did not match what we received.",
                    details: [("ExpectedDigest", md5), ("CalculatedDigest", Data(received.md5).base64EncodedString())])
            }
        }
        func sent(_ name: String) -> String? {
            (headersDescribeBody ? request.header(name) : nil) ?? received.trailers.first { $0.name == name }?.value
        }
        let crc32 = sent("x-amz-checksum-crc32")
        if let crc32, crc32 != received.crc32.base64 {
            throw S3Error(.badDigest, "The CRC32 you specified did not match the calculated checksum.")
        }
        let crc64 = sent("x-amz-checksum-crc64nvme")
        if let crc64, crc64 != received.crc64?.base64 {
            throw S3Error(.badDigest, "The CRC64NVME you specified did not match the calculated checksum.")
        }
        // An MD5 (an algorithm S3 takes beside Content-MD5) is checked against the body's, which the ETag is.
        if let md5 = sent("x-amz-checksum-md5"), md5 != Data(received.md5).base64EncodedString() {
            throw S3Error(.badDigest, "The MD5 you specified did not match the calculated checksum.")
        }
        let others = StoredUpload.algorithms.filter { $0 != "CRC32" && $0 != "CRC64NVME" }.map {
            "x-amz-checksum-" + $0.lowercased()
        }
        let sentNone = crc32 == nil && crc64 == nil && !others.contains { sent($0) != nil }
        return UploadChecksums(crc32: crc32, crc64nvme: crc64 ?? (sentNone ? received.crc64?.base64 : nil))
    }

    /// Whether an upload needs its CRC-64/NVME computed: it sends one (a header, or a trailer `x-amz-trailer`
    /// announces), or it declares no checksum at all and gets S3's default. An upload that sends a CRC-32 (GQLStorage
    /// and the AWS SDKs at their defaults) costs no CRC-64.
    static func needsCRC64(_ request: S3Request) -> Bool {
        let algorithms = StoredUpload.algorithms.map { "x-amz-checksum-" + $0.lowercased() }
        let trailers = (request.header("x-amz-trailer") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        let declared = algorithms.filter { request.header($0) != nil || trailers.contains($0) }
        return declared.isEmpty || declared.contains("x-amz-checksum-crc64nvme")
    }

    /// The headers an upload keeps (`Content-Type` …) and its user metadata.
    static func objectHeaders(_ request: S3Request) throws(S3Error) -> ([String: String], [String: String]) {
        var headers: [String: String] = [:]
        var metadata: [String: String] = [:]
        var metadataBytes = 0
        for (name, value) in request.headers {
            if StoredObject.keptHeaders.contains(name) {
                headers[name] = name == "content-encoding" ? Self.withoutAWSChunked(value) : value
            } else if name.hasPrefix("x-amz-meta-") {
                let short = String(name.dropFirst("x-amz-meta-".count))
                metadata[short] = metadata[short].map { $0 + "," + value } ?? value
                metadataBytes += short.utf8.count + value.utf8.count
            }
        }
        if headers["content-encoding"]?.isEmpty == true { headers["content-encoding"] = nil }
        guard metadataBytes <= maxMetadataBytes else {
            throw S3Error(
                .metadataTooLarge, "Your metadata headers exceed the maximum allowed metadata size.",
                details: [("Size", String(metadataBytes)), ("MaxSizeAllowed", String(maxMetadataBytes))])
        }
        return (headers, metadata)
    }

    /// A `Content-Encoding` without the `aws-chunked` that only describes the upload's framing.
    private static func withoutAWSChunked(_ value: String) -> String {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0 != "aws-chunked" }
            .joined(separator: ",")
    }

    func getObject(_ bucket: String, _ key: String, _ request: S3Request, head: Bool) throws(S3Error) -> Response {
        let (object, file) = try store.open(bucket, key)
        var headers = HTTPFields()
        headers[.eTag] = Self.quoted(object.etag)
        headers[.lastModified] = HTTPDate.format(Int(object.lastModified.timeIntervalSince1970))
        if let ifMatch = request.header("if-match"),
            !ifMatch.split(separator: ",").contains(where: {
                Self.unquoted(String($0)) == object.etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            })
        {
            throw S3Error(
                .preconditionFailed, "At least one of the pre-conditions you specified did not hold",
                details: [("Condition", "If-Match")])
        }
        if let ifNoneMatch = request.header("if-none-match"),
            ifNoneMatch.split(separator: ",").contains(where: {
                Self.unquoted(String($0)) == object.etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.acceptRanges] = "bytes"
        headers[.contentType] = object.headers["content-type"] ?? "binary/octet-stream"
        for (name, value) in object.headers where name != "content-type" {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        for (name, value) in object.metadata {
            if let field = HTTPField.Name("x-amz-meta-" + name) { headers[field] = value }
        }
        // Presigned GETs may override the answer's headers.
        for (parameter, field) in Self.overrides {
            if let value = request.parameter(parameter) { headers[field] = value }
        }
        let range = try ByteRange.resolve(request.header("range"), size: object.size)
        if range == nil, request.header("x-amz-checksum-mode")?.uppercased() == "ENABLED" {
            if let crc = object.checksumCRC32 {
                headers[.checksumCRC32] = crc
                headers[.checksumType] = Self.checksumType(crc32: crc)
            } else if let crc = object.checksumCRC64NVME {
                headers[.checksumCRC64NVME] = crc
                headers[.checksumType] = "FULL_OBJECT"
            }
        }
        var status = HTTPResponse.Status.ok
        if let range {
            status = .partialContent
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(object.size)"
        }
        guard let bytes = range ?? (object.size > 0 ? 0...(object.size - 1) : nil) else {
            headers[.contentLength] = "0"
            return Response(status: status, headers: headers)
        }
        let length = bytes.count
        headers[.contentLength] = String(length)
        if head { return Response(status: status, headers: headers) }
        let body = ResponseBody(contentLength: length) { writer in
            var offset = bytes.lowerBound
            while offset <= bytes.upperBound {
                let count = Int(min(Int64(256 << 10), bytes.upperBound - offset + 1))
                let chunk = try await file.read(at: offset, count: count)
                guard chunk.readableBytes > 0 else {
                    throw GQLError(.io, "The object's file ended before its recorded size.")
                }
                try await writer.write(chunk)
                offset += Int64(chunk.readableBytes)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// S3's checksum type of a stored CRC-32: `COMPOSITE` for a multipart upload's (`…-N`), `FULL_OBJECT` for a
    /// single upload's.
    static func checksumType(crc32: String) -> String {
        crc32.contains("-") ? "COMPOSITE" : "FULL_OBJECT"
    }

    /// The query parameters of a GET that override its answer's headers.
    private static let overrides: [(String, HTTPField.Name)] = [
        ("response-content-type", .contentType), ("response-content-disposition", .contentDisposition),
        ("response-content-encoding", .contentEncoding), ("response-content-language", .contentLanguage),
        ("response-cache-control", .cacheControl), ("response-expires", .expires),
    ]

    func copyObject(_ bucket: String, _ key: String, _ request: S3Request) async throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        let (sourceBucket, sourceKey) = try Self.copySource(request.header("x-amz-copy-source") ?? "")
        let (source, file) = try store.open(sourceBucket, sourceKey)
        let directive = request.header("x-amz-metadata-directive")?.uppercased() ?? "COPY"
        guard directive == "COPY" || directive == "REPLACE" else {
            throw S3Error(
                .invalidArgument, "Unknown metadata directive.", details: [("ArgumentName", "x-amz-metadata-directive")]
            )
        }
        if sourceBucket == bucket, sourceKey == key, directive == "COPY" {
            throw S3Error(
                .invalidRequest,
                "This copy request is illegal because it is trying to copy an object to itself without changing the "
                    + "object's metadata, storage class, website redirect location or encryption attributes.")
        }
        var object = source
        object.key = key
        object.lastModified = configuration.clock()
        if directive == "REPLACE" {
            (object.headers, object.metadata) = try Self.objectHeaders(request)
        }
        let temporary: URL
        do {
            temporary = try store.folder.temporaryFileURL()
            let target = try OpenFile.creating(temporary)
            var offset: Int64 = 0
            while offset < source.size {
                let chunk = try await file.read(at: offset, count: Int(min(Int64(1 << 20), source.size - offset)))
                guard chunk.readableBytes > 0 else { throw GQLError(.io, "The source's file ended early.") }
                try await offload { try chunk.withUnsafeReadableBytes { try target.writeAll($0) } }
                offset += Int64(chunk.readableBytes)
            }
            try await offload { try target.synchronize() }
        } catch {
            throw S3Error(.internalError, "The object could not be copied: \(error)")
        }
        try store.commit(bucket, temporary: temporary, object)
        var xml = XMLWriter()
        xml.open("CopyObjectResult", namespace: true)
        xml.element("LastModified", Self.timestamp(object.lastModified))
        xml.element("ETag", Self.quoted(object.etag))
        if let crc = object.checksumCRC32 { xml.element("ChecksumCRC32", crc) }
        if let crc = object.checksumCRC64NVME {
            xml.element("ChecksumCRC64NVME", crc)
            xml.element("ChecksumType", "FULL_OBJECT")
        }
        xml.close("CopyObjectResult")
        return Self.xml(xml)
    }

    /// The bucket and key of `x-amz-copy-source` (`bucket/key` or `/bucket/key`, percent-encoded).
    static func copySource(_ header: String) throws(S3Error) -> (String, String) {
        var text = header
        if let question = text.firstIndex(of: "?") {
            guard text[question...].hasPrefix("?versionId=null") || text[question...] == "?" else {
                throw S3Error(.notImplemented, "The storage emulator keeps no versions.")
            }
            text = String(text[..<question])
        }
        guard let decoded = text.removingPercentEncoding else {
            throw S3Error(
                .invalidArgument, "Invalid copy source encoding.", details: [("ArgumentName", "x-amz-copy-source")])
        }
        let trimmed = decoded.hasPrefix("/") ? String(decoded.dropFirst()) : decoded
        guard let slash = trimmed.firstIndex(of: "/"), slash != trimmed.startIndex,
            trimmed.index(after: slash) != trimmed.endIndex
        else {
            throw S3Error(
                .invalidArgument, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                details: [("ArgumentName", "x-amz-copy-source")])
        }
        return (String(trimmed[..<slash]), String(trimmed[trimmed.index(after: slash)...]))
    }

    func deleteObjects(
        _ bucket: String, _ request: S3Request, _ body: RequestBody, _ payload: SigV4Verifier.Payload
    ) async throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        let document = try await xmlBody(body, request, payload)
        guard document.name == "Delete" else { throw Self.malformedXML }
        let keys = document.all("Object").compactMap { $0.child("Key") }
        guard !keys.isEmpty, keys.count <= 1000, keys.count == document.all("Object").count else {
            throw Self.malformedXML
        }
        let quiet = document.child("Quiet") == "true"
        var xml = XMLWriter()
        xml.open("DeleteResult", namespace: true)
        for key in keys {
            do {
                try store.delete(bucket, key)
                if !quiet {
                    xml.open("Deleted")
                    xml.element("Key", key)
                    xml.close("Deleted")
                }
            } catch {
                xml.open("Error")
                xml.element("Key", key)
                xml.element("Code", error.code.name)
                xml.element("Message", error.message)
                xml.close("Error")
            }
        }
        xml.close("DeleteResult")
        return Self.xml(xml)
    }

    static let malformedXML = S3Error(
        .malformedXML, "The XML you provided was not well-formed or did not validate against our published schema")

    /// A small XML request body, read (and checked against its signature and digests, a CRC-64/NVME included) then
    /// parsed; one over ``maxXMLBytes`` is `MalformedXML`. `headersDescribeBody`: see
    /// ``receiveChecked(_:_:_:maxBytes:crc64:headersDescribeBody:)``.
    func xmlBody(
        _ body: RequestBody, _ request: S3Request, _ payload: SigV4Verifier.Payload, headersDescribeBody: Bool = true
    ) async throws(S3Error) -> S3XMLNode {
        let received: ReceivedBody
        do throws(S3Error) {
            (received, _) = try await receiveChecked(
                body, request, payload, maxBytes: Self.maxXMLBytes, crc64: true,
                headersDescribeBody: headersDescribeBody)
        } catch  where error.code == .entityTooLarge {
            // No valid document of S3's is this large (a <Delete> of 1,000 longest keys is about 1.1 MB).
            throw Self.malformedXML
        }
        defer { try? FileManager.default.removeItem(at: received.temporary) }
        let data: Data
        do {
            data = try Data(contentsOf: received.temporary)
        } catch {
            throw S3Error(.internalError, "The request body could not be read back.")
        }
        return try S3XMLNode.parse(data)
    }
}

// Header names spelled here as constants: valid tokens, so `init?` cannot fail on them (the force unwrap
// is on no caller's, file's or server's value).
// swift-format-ignore: NeverForceUnwrap
extension HTTPField.Name {
    static let checksumCRC32 = HTTPField.Name("x-amz-checksum-crc32")!
    static let checksumCRC64NVME = HTTPField.Name("x-amz-checksum-crc64nvme")!
    static let checksumMD5 = HTTPField.Name("x-amz-checksum-md5")!
    static let checksumType = HTTPField.Name("x-amz-checksum-type")!
    static let checksumAlgorithm = HTTPField.Name("x-amz-checksum-algorithm")!
}
