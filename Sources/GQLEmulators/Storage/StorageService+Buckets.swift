import Foundation
import HTTPTypes
import Hummingbird

/// ListBuckets, CreateBucket, DeleteBucket, HeadBucket, GetBucketLocation, ListObjects (V1 and V2).
extension StorageService {
    func listBuckets() -> Response {
        var xml = XMLWriter()
        xml.open("ListAllMyBucketsResult", namespace: true)
        xml.open("Owner")
        xml.element("ID", Self.ownerId)
        xml.element("DisplayName", "gql-local")
        xml.close("Owner")
        xml.open("Buckets")
        for bucket in store.buckets() {
            xml.open("Bucket")
            xml.element("Name", bucket.name)
            xml.element("CreationDate", Self.timestamp(bucket.created))
            xml.close("Bucket")
        }
        xml.close("Buckets")
        xml.close("ListAllMyBucketsResult")
        return Self.xml(xml)
    }

    /// The one owner of everything in the emulator.
    static let ownerId = "6a6f6b65000000000000000000000000000000000000000000000000676c6f63"

    func createBucket(_ bucket: String) throws(S3Error) -> Response {
        try store.createBucket(bucket, at: configuration.clock())
        var headers = HTTPFields()
        headers[.location] = "/\(bucket)"
        return Response(status: .ok, headers: headers)
    }

    func deleteBucket(_ bucket: String) throws(S3Error) -> Response {
        if !uploads.uploads(in: bucket).isEmpty, store.bucketExists(bucket) {
            throw S3Error(
                .bucketNotEmpty, "The bucket you tried to delete is not empty", details: [("BucketName", bucket)])
        }
        try store.deleteBucket(bucket)
        return Response(status: .noContent)
    }

    func headBucket(_ bucket: String) throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        var headers = HTTPFields()
        if let region = HTTPField.Name("x-amz-bucket-region") { headers[region] = configuration.region }
        return Response(status: .ok, headers: headers)
    }

    func location(_ bucket: String) throws(S3Error) -> Response {
        guard store.bucketExists(bucket) else { throw ObjectStore.noSuchBucket(bucket) }
        var xml = XMLWriter()
        xml.open("LocationConstraint", namespace: true)
        // S3 answers an empty constraint for us-east-1.
        if configuration.region != "us-east-1" { xml.characters(configuration.region) }
        xml.close("LocationConstraint")
        return Self.xml(xml)
    }

    /// The listing parameters both versions share: prefix, delimiter, max-keys (0 to 1,000; default 1,000),
    /// encoding-type.
    private func listQuery(_ request: S3Request) throws(S3Error) -> (ListQuery, urlEncoded: Bool) {
        var query = ListQuery()
        query.prefix = request.parameter("prefix") ?? ""
        query.delimiter = request.parameter("delimiter").flatMap { $0.isEmpty ? nil : $0 }
        if let text = request.parameter("max-keys") {
            guard let maxKeys = Int(text), maxKeys >= 0 else {
                throw S3Error(
                    .invalidArgument, "Provided max-keys not an integer or within integer range",
                    details: [("ArgumentName", "max-keys"), ("ArgumentValue", text)])
            }
            query.maxKeys = min(maxKeys, 1000)
        }
        let encoding = request.parameter("encoding-type")
        if let encoding, encoding != "url" {
            throw S3Error(
                .invalidArgument, "Invalid Encoding Method specified in Request",
                details: [("ArgumentName", "encoding-type"), ("ArgumentValue", encoding)])
        }
        return (query, encoding == "url")
    }

    func listObjectsV2(_ bucket: String, _ request: S3Request) throws(S3Error) -> Response {
        var (query, urlEncoded) = try listQuery(request)
        let token = request.parameter("continuation-token")
        let startAfter = request.parameter("start-after")
        if let token {
            guard let position = Self.decodeToken(token) else {
                throw S3Error(
                    .invalidArgument, "The continuation token provided is incorrect",
                    details: [("ArgumentName", "continuation-token")])
            }
            query.after = position
        } else if let startAfter, !startAfter.isEmpty {
            query.after = ListPage.Position(value: startAfter, isCommonPrefix: false)
        }
        let fetchOwner = request.parameter("fetch-owner") == "true"
        return try listing(bucket, query, urlEncoded: urlEncoded, owner: fetchOwner) { xml, page, encode in
            if let delimiter = query.delimiter { xml.element("Delimiter", encode(delimiter)) }
            xml.element("MaxKeys", String(query.maxKeys))
            if urlEncoded { xml.element("EncodingType", "url") }
            xml.element("KeyCount", String(page.count))
            xml.element("IsTruncated", page.isTruncated ? "true" : "false")
            if let token { xml.element("ContinuationToken", token) }
            if page.isTruncated, let last = page.last { xml.element("NextContinuationToken", Self.encodeToken(last)) }
            if let startAfter { xml.element("StartAfter", encode(startAfter)) }
        }
    }

    func listObjectsV1(_ bucket: String, _ request: S3Request) throws(S3Error) -> Response {
        var (query, urlEncoded) = try listQuery(request)
        let marker = request.parameter("marker") ?? ""
        if !marker.isEmpty {
            // A marker that is a common prefix of this listing skips that prefix's keys, as S3 does.
            let isPrefix = query.delimiter.map { marker.hasSuffix($0) && marker.hasPrefix(query.prefix) } ?? false
            query.after = ListPage.Position(value: marker, isCommonPrefix: isPrefix)
        }
        return try listing(bucket, query, urlEncoded: urlEncoded, owner: true) { xml, page, encode in
            xml.element("Marker", encode(marker))
            if query.delimiter != nil, page.isTruncated, let last = page.last {
                xml.element("NextMarker", encode(last.value))
            }
            xml.element("MaxKeys", String(query.maxKeys))
            if let delimiter = query.delimiter { xml.element("Delimiter", encode(delimiter)) }
            if urlEncoded { xml.element("EncodingType", "url") }
            xml.element("IsTruncated", page.isTruncated ? "true" : "false")
        }
    }

    /// A `ListBucketResult`: the name and prefix, what `head` writes about the page, then its objects and common
    /// prefixes; keys and prefixes percent-encoded with `encoding-type=url`.
    private func listing(
        _ bucket: String, _ query: ListQuery, urlEncoded: Bool, owner: Bool,
        head: (inout XMLWriter, ListPage, (String) -> String) -> Void
    ) throws(S3Error) -> Response {
        guard let page = store.list(bucket, query) else { throw ObjectStore.noSuchBucket(bucket) }
        let encode: (String) -> String = urlEncoded ? { SigV4Verifier.encode($0, keepSlash: true) } : { $0 }
        var xml = XMLWriter()
        xml.open("ListBucketResult", namespace: true)
        xml.element("Name", bucket)
        xml.element("Prefix", encode(query.prefix))
        head(&xml, page, encode)
        for object in page.objects { contents(object, into: &xml, encode: encode, owner: owner) }
        for prefix in page.commonPrefixes {
            xml.open("CommonPrefixes")
            xml.element("Prefix", encode(prefix))
            xml.close("CommonPrefixes")
        }
        xml.close("ListBucketResult")
        return Self.xml(xml)
    }

    private func contents(
        _ object: StoredObject, into xml: inout XMLWriter, encode: (String) -> String, owner: Bool
    ) {
        xml.open("Contents")
        xml.element("Key", encode(object.key))
        xml.element("LastModified", Self.timestamp(object.lastModified))
        xml.element("ETag", Self.quoted(object.etag))
        if let crc = object.checksumCRC32 {
            xml.element("ChecksumAlgorithm", "CRC32")
            xml.element("ChecksumType", Self.checksumType(crc32: crc))
        } else if object.checksumCRC64NVME != nil {
            xml.element("ChecksumAlgorithm", "CRC64NVME")
            xml.element("ChecksumType", "FULL_OBJECT")
        }
        xml.element("Size", String(object.size))
        if owner {
            xml.open("Owner")
            xml.element("ID", Self.ownerId)
            xml.element("DisplayName", "gql-local")
            xml.close("Owner")
        }
        xml.element("StorageClass", "STANDARD")
        xml.close("Contents")
    }

    /// A continuation token: where the page ended, opaque to clients (base64 of a marker byte and the key or
    /// common prefix).
    static func encodeToken(_ position: ListPage.Position) -> String {
        Data(((position.isCommonPrefix ? "p" : "k") + position.value).utf8).base64EncodedString()
    }

    static func decodeToken(_ token: String) -> ListPage.Position? {
        guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8),
            let kind = text.first, kind == "p" || kind == "k"
        else { return nil }
        return ListPage.Position(value: String(text.dropFirst()), isCommonPrefix: kind == "p")
    }
}
