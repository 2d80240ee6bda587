import Foundation

/// An object's record, kept as JSON beside its bytes: everything HEAD answers.
struct StoredObject: Codable, Sendable, Equatable {
    var key: String
    var size: Int64
    /// The ETag without quotes: the MD5 in hex, or for a multipart upload the MD5 of the parts' MD5s, `-`, and the
    /// number of parts.
    var etag: String
    var lastModified: Date
    /// The name of the file holding the bytes, in the bucket's `data` folder.
    var dataFile: String
    /// `Content-Type`, `Content-Encoding`, `Content-Disposition`, `Content-Language`, `Cache-Control`, `Expires`,
    /// as given at upload (lowercase names).
    var headers: [String: String] = [:]
    /// User metadata: the `x-amz-meta-` headers, names lowercased and without the prefix.
    var metadata: [String: String] = [:]
    /// The CRC-32 in base64 when the upload sent one (`…-N` for a multipart upload's composite checksum).
    var checksumCRC32: String?
    /// The CRC-64/NVME of the whole object in base64: S3's default checksum, which it gives an object uploaded
    /// without one (in one PUT, or in parts none of which sent one). `nil` in records written before it was kept.
    var checksumCRC64NVME: String?

    /// The stored headers S3 keeps and answers with.
    static let keptHeaders = [
        "content-type", "content-encoding", "content-disposition", "content-language", "cache-control", "expires",
    ]
}

/// A bucket's record.
struct StoredBucket: Codable, Sendable, Equatable {
    var name: String
    var created: Date
}
