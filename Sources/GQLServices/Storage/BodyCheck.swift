import Foundation
import GQLCore
import GQLCrypto
import NIOHTTP1

/// What a downloaded body is checked against, as the AWS SDKs check what they download: the MD5 its ETag is (an
/// object stored in one part, ``GQLStorage/etagMD5(_:)``), otherwise the whole object's checksum S3 answers a GET
/// sent with `x-amz-checksum-mode: ENABLED`, when it is one computed here (CRC-64/NVME, S3's default, or CRC-32) and
/// of the full object (`x-amz-checksum-type: FULL_OBJECT`, or no type). A composite checksum (`…-N`, a checksum of
/// the parts' checksums, as an upload in parts with CRC32 gets, typed `COMPOSITE` or not) and other algorithms leave
/// nothing to check. A body that is a range of the object is never checked against them (they say nothing of a part
/// of it): GQLStorage asks for whole objects only and refuses a range (``requireWholeObject(status:_:call:)``).
struct BodyCheck: Sendable {
    enum Kind: Sendable {
        case md5, crc64nvme, crc32
    }

    let kind: Kind
    /// The digest the body must have: the MD5's 16 bytes, or the CRC's, most significant first.
    let expected: [UInt8]

    /// The check an answer's headers allow; nil when they allow none.
    init?(_ headers: HTTPHeaders) {
        if let md5 = GQLStorage.etagMD5(headers) {
            (kind, expected) = (.md5, md5)
            return
        }
        guard (headers.first(name: "x-amz-checksum-type")?.uppercased() ?? "FULL_OBJECT") == "FULL_OBJECT" else {
            return nil
        }
        // A composite value is `<base64>-<parts>`, also from servers that send no checksum type.
        if let text = headers.first(name: "x-amz-checksum-crc64nvme"), !text.contains("-"),
            let crc = CRC64NVME(base64: text)
        {
            (kind, expected) = (.crc64nvme, crc.bytes)
        } else if let text = headers.first(name: "x-amz-checksum-crc32"), !text.contains("-"),
            let crc = CRC32(base64: text)
        {
            (kind, expected) = (.crc32, crc.bytes)
        } else {
            return nil
        }
    }

    /// Refuses a range of the object (`206 Partial Content`, or any answer with a `Content-Range`) answered to a
    /// download of all of it: GQLStorage asks for no range, so the body is not the object, however its length and
    /// digests look.
    static func requireWholeObject(status: Int, _ headers: HTTPHeaders, call: GQLStorage.Call) throws {
        let hasRange = headers.contains(name: "Content-Range")
        guard status == 206 || hasRange else { return }
        let seen = "status \(status)" + (hasRange ? " with a Content-Range" : "")
        throw GQLError(
            .invalidResponse,
            "the answer for \(call.bucket)/\(call.key ?? "") is a part of the object (\(seen)), not all of it",
            operation: call.operation)
    }

    /// The digest of a body received whole.
    func digest(of body: Data) -> [UInt8] {
        switch kind {
        case .md5: MD5.hash(body)
        case .crc64nvme: CRC64NVME(body).bytes
        case .crc32: CRC32(body).bytes
        }
    }

    /// Refuses a body whose digest is not the one expected.
    func verify(_ digest: [UInt8], call: GQLStorage.Call) throws {
        guard !Bytes.constantTimeEquals(expected, digest) else { return }
        let promise =
            switch kind {
            case .md5: "its ETag"
            case .crc64nvme: "the CRC-64/NVME S3 answered for it (x-amz-checksum-crc64nvme)"
            case .crc32: "the CRC-32 S3 answered for it (x-amz-checksum-crc32)"
            }
        throw GQLError(
            .invalidResponse,
            "the body of \(call.bucket)/\(call.key ?? "") does not match \(promise): it was damaged on the way",
            operation: call.operation)
    }

    /// The running digest of a body received a chunk at a time.
    struct Running: ~Copyable {
        private var md5: Digest?
        private var crc64: CRC64NVME?
        private var crc32: CRC32?

        init(_ kind: Kind) throws {
            switch kind {
            case .md5: md5 = try Digest(.md5)
            case .crc64nvme: crc64 = CRC64NVME()
            case .crc32: crc32 = CRC32()
            }
        }

        mutating func update(_ bytes: UnsafeRawBufferPointer) throws {
            try md5?.update(bytes)
            crc64?.update(bytes)
            crc32?.update(bytes)
        }

        consuming func finalize() throws -> [UInt8] {
            if let md5 = md5.take() { return try md5.finalize() }
            return crc64?.bytes ?? crc32?.bytes ?? []
        }
    }
}
